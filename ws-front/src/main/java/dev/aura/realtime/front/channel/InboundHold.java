package dev.aura.realtime.front.channel;

import dev.aura.realtime.front.log.LogCode;
import dev.aura.realtime.front.protocol.PhoenixMessage;
import io.netty.channel.Channel;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one connection's client events in order while a credential is being checked: a join's
 * {@code access_token} or an {@code access_token} push whose verification must ask a cdc-worker
 * (a project API key or token issuer not known yet, docs/security.md) continues once the answer
 * came, and the events after it wait for it (reads are paused meanwhile, so what waits is what the
 * last read held). The answer comes within {@code PROJECT_KEYS_TIMEOUT_MS}. A verification that
 * completes at once (almost all: answers are kept) continues at once. Event loop only.
 */
final class InboundHold {
    private static final Logger log = LoggerFactory.getLogger(InboundHold.class);
    private final Channel channel;
    private final Consumer<PhoenixMessage.Inbound> handler;
    private final ArrayDeque<PhoenixMessage.Inbound> held = new ArrayDeque<>();
    private boolean holding;

    /** @param handler handles an event that waited */
    InboundHold(Channel channel, Consumer<PhoenixMessage.Inbound> handler) {
        this.channel = channel;
        this.handler = handler;
    }

    /** True when {@code msg} must wait (it is kept and handled later), false to handle it now. */
    boolean holds(PhoenixMessage.Inbound msg) {
        if (!holding) {
            return false;
        }
        held.add(msg);
        return true;
    }

    /** Runs {@code then} once {@code check} completed: now when it is, else later, holding the events after it. */
    void after(CompletableFuture<?> check, Runnable then) {
        if (check.isDone()) {
            then.run();
            return;
        }
        holding = true;
        channel.config().setAutoRead(false);
        check.whenComplete((v, e) -> channel.eventLoop().execute(() -> {
            holding = false;
            if (!channel.isActive()) {
                held.clear();
                return;
            }
            channel.config().setAutoRead(true);
            try {
                then.run();
            } catch (RuntimeException err) { // as the router does for any event: logged, the connection stays
                LogCode.HandlerFailed.warn(log, "a checked event on {}: {}", channel, err.toString(), err);
            }
            while (!holding && !held.isEmpty()) {
                handler.accept(held.poll());
            }
        }));
    }
}
