package dev.aura.realtime.front.transport;

import dev.aura.realtime.common.auth.AuthException;
import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.front.auth.Credentials;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Consumer;

/**
 * Continues an HTTP request (the WebSocket upgrade, the SSE request, a REST broadcast) once its
 * credential was checked ({@link Credentials}): at once when the answer is kept (almost always),
 * else on the connection's event loop when it came (within {@code PROJECT_KEYS_TIMEOUT_MS}), with
 * the request retained and the connection's reads paused meanwhile, so a pipelined request waits
 * its turn; {@link HttpDeadlines} runs no deadline while a complete request waits for its answer.
 */
final class Verification {
    private Verification() {}

    static void then(
            ChannelHandlerContext ctx,
            FullHttpRequest req,
            CompletableFuture<Claims> check,
            Consumer<Claims> accepted,
            Consumer<AuthException> refused) {
        if (check.isDone()) {
            finish(check, accepted, refused);
            return;
        }
        req.retain();
        ctx.channel().config().setAutoRead(false);
        check.whenComplete((c, e) -> ctx.executor().execute(() -> {
            try {
                if (ctx.channel().isActive()) {
                    ctx.channel().config().setAutoRead(true);
                    finish(check, accepted, refused);
                }
            } finally {
                req.release();
            }
        }));
    }

    /** 503 when the credential could not be checked now (the client may try again), else 401. */
    static HttpResponseStatus status(AuthException e) {
        return e.unavailable() ? HttpResponseStatus.SERVICE_UNAVAILABLE : HttpResponseStatus.UNAUTHORIZED;
    }

    private static void finish(
            CompletableFuture<Claims> check, Consumer<Claims> accepted, Consumer<AuthException> refused) {
        Claims claims;
        try {
            claims = check.join();
        } catch (CompletionException | CancellationException e) {
            refused.accept(Credentials.refusal(e));
            return;
        }
        accepted.accept(claims);
    }
}
