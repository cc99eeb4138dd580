package dev.aura.realtime.front.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The ws-front meters (Prometheus names after Micrometer's conversion in parentheses):
 * connections ({@code aura_ws_connections}), joined channels ({@code aura_ws_channels_joined}),
 * frames in/out ({@code aura_ws_messages_in_total}, {@code aura_ws_messages_out_total}),
 * malformed frames ({@code aura_ws_messages_malformed_total}), NATS relay in/out by kind
 * ({@code aura_relay_messages_total{direction,kind}}), relay errors ({@code aura_relay_errors_total}),
 * dropped slow clients ({@code aura_ws_slow_clients_dropped_total}), connections closed by the
 * event loops' overload bound ({@code aura_ws_overload_shed_total}), bytes waiting in the event
 * loops' delivery queues ({@code aura_ws_queued_bytes}), postgres_changes frames sent
 * ({@code aura_ws_postgres_changes_delivered_total}). Thread-safe.
 */
public final class FrontMetrics {
    private final AtomicInteger connections = new AtomicInteger();
    private final AtomicInteger channels = new AtomicInteger();
    private final AtomicLong queuedBytes = new AtomicLong();
    private final Counter messagesIn;
    private final Counter messagesOut;
    private final Counter malformed;
    private final Counter slowClients;
    private final Counter overloadShed;
    private final Counter relayInBroadcast;
    private final Counter relayInChange;
    private final Counter relayInStatus;
    private final Counter relayOutBroadcast;
    private final Counter relayErrors;
    private final Counter relayDuplicates;
    private final Counter relayLinkLosses;
    private final Counter changeDeliveries;

    public FrontMetrics(MeterRegistry registry) {
        Gauge.builder("aura.ws.connections", connections, AtomicInteger::get)
                .description("open WebSocket connections")
                .register(registry);
        Gauge.builder("aura.ws.channels.joined", channels, AtomicInteger::get)
                .description("joined channels")
                .register(registry);
        messagesIn = counter(registry, "aura.ws.messages.in", "client frames received");
        messagesOut = counter(registry, "aura.ws.messages.out", "frames sent to clients");
        malformed = counter(registry, "aura.ws.messages.malformed", "undecodable client frames");
        slowClients = counter(registry, "aura.ws.slow.clients.dropped", "connections closed for not reading");
        overloadShed = counter(
                registry,
                "aura.ws.overload.shed",
                "connections closed because a message for them waited too long in, or did not fit, an event loop's queue");
        Gauge.builder("aura.ws.queued.bytes", queuedBytes, AtomicLong::get)
                .description("bytes waiting in the event loops' delivery queues")
                .register(registry);
        relayInBroadcast = relay(registry, "in", "broadcast");
        relayInChange = relay(registry, "in", "change");
        relayInStatus = relay(registry, "in", "cdc_status");
        relayOutBroadcast = relay(registry, "out", "broadcast");
        relayErrors = counter(registry, "aura.relay.errors", "undecodable or failed NATS messages");
        relayDuplicates = counter(
                registry, "aura.relay.duplicates", "re-published change events dropped (Aura-Event-Id seen before)");
        relayLinkLosses =
                counter(registry, "aura.relay.link.losses", "NATS link drops (postgres_changes subscribers were told)");
        changeDeliveries = counter(registry, "aura.ws.postgres.changes.delivered", "postgres_changes frames sent");
    }

    private static Counter counter(MeterRegistry registry, String name, String description) {
        return Counter.builder(name).description(description).register(registry);
    }

    private static Counter relay(MeterRegistry registry, String direction, String kind) {
        return Counter.builder("aura.relay.messages")
                .tag("direction", direction)
                .tag("kind", kind)
                .description("NATS messages relayed")
                .register(registry);
    }

    public void connectionOpened() {
        connections.incrementAndGet();
    }

    public void connectionClosed() {
        connections.decrementAndGet();
    }

    public void channelJoined() {
        channels.incrementAndGet();
    }

    public void channelLeft() {
        channels.decrementAndGet();
    }

    /** Joined channels now (the {@code aura_ws_channels_joined} gauge). */
    public int channels() {
        return channels.get();
    }

    public void messageIn() {
        messagesIn.increment();
    }

    public void messagesOut(int n) {
        messagesOut.increment(n);
    }

    public void malformed() {
        malformed.increment();
    }

    public void slowClientDropped() {
        slowClients.increment();
    }

    public void overloadShed() {
        overloadShed.increment();
    }

    /** Bytes entered ({@code delta > 0}) or left an event loop's delivery queue. */
    public void queuedBytes(long delta) {
        queuedBytes.addAndGet(delta);
    }

    /** A broadcast of another replica taken off NATS. */
    public void relayInBroadcast() {
        relayInBroadcast.increment();
    }

    /** A change event taken off NATS. */
    public void relayInChange() {
        relayInChange.increment();
    }

    /** A cdc-worker status message taken off NATS. */
    public void relayInStatus() {
        relayInStatus.increment();
    }

    public void relayOutBroadcast() {
        relayOutBroadcast.increment();
    }

    public void relayError() {
        relayErrors.increment();
    }

    /** A change event dropped because it was relayed before (a re-publish). */
    public void relayDuplicate() {
        relayDuplicates.increment();
    }

    /** This replica's NATS link dropped. */
    public void relayLinkLost() {
        relayLinkLosses.increment();
    }

    public void changesDelivered(int n) {
        changeDeliveries.increment(n);
    }
}
