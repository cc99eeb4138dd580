package dev.aura.realtime.front.transport;

import dev.aura.realtime.front.config.ConnectionBounds;
import dev.aura.realtime.front.metrics.FrontMetrics;
import dev.aura.realtime.front.metrics.FrontMetrics.Timeout;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The time bounds of a plain HTTP connection, between the codec and the aggregator. At any moment
 * at most one deadline runs:
 *
 * <ul>
 *   <li>from connect, the first request head must be complete within the first-request deadline
 *       (5 s; slowloris, browsers send it at once);
 *   <li>from each complete response (keep-alive), the next head must be complete within
 *       {@code HTTP_KEEP_ALIVE_TIMEOUT_MS}; a connection that sends nothing, or dribbles a head,
 *       is closed silently, as nginx and Netty users expect of an idle keep-alive connection;
 *   <li>from a head with a body (Content-Length or chunked), the whole body must arrive within
 *       {@code HTTP_BODY_TIMEOUT_MS}, else {@code 408 {"error": "Request Timeout: ..."}} and close.
 * </ul>
 *
 * While a complete request waits for its response (a REST broadcast waits for NATS) nothing runs:
 * the server's own latency is not the client's fault. {@link FrontInitializer} removes this
 * handler when the connection becomes a WebSocket or an SSE stream, which have their own idle and
 * heartbeat rules. Closes are counted ({@code aura_ws_connection_timeouts_total{kind}}) and logged
 * at debug only: an attacker opening many connections must not flood the log. Event loop only.
 */
final class HttpDeadlines extends ChannelDuplexHandler {
    static final String NAME = "http-deadlines";
    private static final Logger log = LoggerFactory.getLogger(HttpDeadlines.class);

    private final Duration firstRequest;
    private final ConnectionBounds bounds;
    private final FrontMetrics metrics;
    private ScheduledFuture<?> timer;
    /** A head was read, its last content not yet. */
    private boolean inBody;
    /** Complete requests whose response has not been written completely yet (pipelining). */
    private int unanswered;

    private boolean removed;

    HttpDeadlines(Duration firstRequest, ConnectionBounds bounds, FrontMetrics metrics) {
        this.firstRequest = firstRequest;
        this.bounds = bounds;
        this.metrics = metrics;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        arm(ctx, firstRequest, Timeout.FIRST_REQUEST);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof HttpRequest req) {
            cancel();
            inBody = true;
            if (!(msg instanceof LastHttpContent) && hasBody(req)) {
                arm(ctx, bounds.body(), Timeout.REQUEST_BODY);
            }
        }
        if (msg instanceof LastHttpContent) {
            cancel();
            inBody = false;
            unanswered++;
        }
        ctx.fireChannelRead(msg);
    }

    private static boolean hasBody(HttpRequest req) {
        return HttpUtil.isTransferEncodingChunked(req) || HttpUtil.getContentLength(req, 0L) > 0;
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        boolean informational = msg instanceof HttpResponse res
                && res.status().codeClass() == HttpStatusClass.INFORMATIONAL; // 100 Continue
        if (msg instanceof LastHttpContent && !informational) {
            promise = promise.unvoid();
            promise.addListener(f -> responded(ctx));
        }
        ctx.write(msg, promise);
    }

    private void responded(ChannelHandlerContext ctx) {
        unanswered = Math.max(0, unanswered - 1);
        if (unanswered == 0 && !inBody && !removed && ctx.channel().isActive()) {
            arm(ctx, bounds.keepAlive(), Timeout.KEEP_ALIVE);
        }
    }

    private void arm(ChannelHandlerContext ctx, Duration after, Timeout kind) {
        cancel();
        timer = ctx.executor().schedule(() -> expire(ctx, kind, after), after.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void expire(ChannelHandlerContext ctx, Timeout kind, Duration after) {
        timer = null;
        if (removed || !ctx.channel().isActive()) {
            return;
        }
        metrics.timedOut(kind);
        log.debug("closing {}: {} deadline of {} ms passed", ctx.channel().id(), kind, after.toMillis());
        if (kind == Timeout.REQUEST_BODY) {
            HttpRouter.respondAndClose(
                    ctx,
                    HttpResponseStatus.REQUEST_TIMEOUT,
                    "Request Timeout: the request body did not arrive within " + after.toMillis() + " ms");
        } else {
            ctx.channel().close();
        }
    }

    private void cancel() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        cancel();
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        removed = true;
        cancel();
    }
}
