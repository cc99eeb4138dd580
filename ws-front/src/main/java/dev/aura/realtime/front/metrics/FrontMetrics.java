package dev.aura.realtime.front.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The ws-front meters (Prometheus names after Micrometer's conversion in parentheses):
 * connections ({@code aura_ws_connections}), joined channels ({@code aura_ws_channels_joined}),
 * frames in/out ({@code aura_ws_messages_in_total}, {@code aura_ws_messages_out_total}),
 * malformed frames, NATS relay in/out by kind ({@code aura_relay_messages_total{direction,kind}}),
 * dropped slow clients ({@code aura_ws_slow_clients_dropped_total}). Thread-safe.
 */
public final class FrontMetrics {
    private final AtomicInteger connections = new AtomicInteger();
    private final AtomicInteger channels = new AtomicInteger();
    private final Counter messagesIn;
    private final Counter messagesOut;
    private final Counter malformed;
    private final Counter slowClients;
    private final Counter relayInBroadcast;
    private final Counter relayInChange;
    private final Counter relayInStatus;
    private final Counter relayOutBroadcast;
    private final Counter relayErrors;
    private final Counter changeDeliveries;

    public FrontMetrics(MeterRegistry registry) {
        Gauge.builder("aura.ws.connections", connections, AtomicInteger::get)
                .description("open WebSocket connections")
                .register(registry);
        Gauge.builder("aura.ws.channels.joined", channels, AtomicInteger::get)
                .description("joined channels")
                .register(registry);
        messagesIn = Counter.builder("aura.ws.messages.in")
                .description("client frames received")
                .register(registry);
        messagesOut = Counter.builder("aura.ws.messages.out")
                .description("frames sent to clients")
                .register(registry);
        malformed = Counter.builder("aura.ws.messages.malformed")
                .description("undecodable client frames")
                .register(registry);
        slowClients = Counter.builder("aura.ws.slow.clients.dropped")
                .description("connections closed for not reading")
                .register(registry);
        relayInBroadcast = relay(registry, "in", "broadcast");
        relayInChange = relay(registry, "in", "change");
        relayInStatus = relay(registry, "in", "cdc_status");
        relayOutBroadcast = relay(registry, "out", "broadcast");
        relayErrors = Counter.builder("aura.relay.errors")
                .description("undecodable or failed NATS messages")
                .register(registry);
        changeDeliveries = Counter.builder("aura.ws.postgres.changes.delivered")
                .description("postgres_changes frames sent")
                .register(registry);
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

    public int connections() {
        return connections.get();
    }

    public void channelJoined() {
        channels.incrementAndGet();
    }

    public void channelLeft() {
        channels.decrementAndGet();
    }

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

    public double slowClientsDropped() {
        return slowClients.count();
    }

    public void relayIn(String kind) {
        switch (kind) {
            case "broadcast" -> relayInBroadcast.increment();
            case "change" -> relayInChange.increment();
            default -> relayInStatus.increment();
        }
    }

    public void relayOutBroadcast() {
        relayOutBroadcast.increment();
    }

    public void relayError() {
        relayErrors.increment();
    }

    public void changesDelivered(int n) {
        changeDeliveries.increment(n);
    }
}
