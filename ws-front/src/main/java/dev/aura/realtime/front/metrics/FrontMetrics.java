package dev.aura.realtime.front.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.Map;
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
 * ({@code aura_ws_postgres_changes_delivered_total}), connections closed by a connection-level
 * time bound ({@code aura_ws_connection_timeouts_total{kind}}, {@link Timeout}). Thread-safe.
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
    private final Counter checksShared;
    private final Counter relayLinkLosses;
    private final Counter changeDeliveries;
    private final MeterRegistry meters;
    private final Counter resumed;
    private final Counter replayedEvents;
    private final Map<Timeout, Counter> timeouts = new EnumMap<>(Timeout.class);

    /** The connection-level time bounds, as the {@code kind} tag of {@code aura_ws_connection_timeouts_total}. */
    public enum Timeout {
        /** No first request head within 5 s of connecting (slowloris, or a browser's unused preconnect). */
        FIRST_REQUEST("first_request"),
        /** No complete next request head within {@code HTTP_KEEP_ALIVE_TIMEOUT_MS} of a response. */
        KEEP_ALIVE("keep_alive"),
        /** A request body not complete within {@code HTTP_BODY_TIMEOUT_MS} (answered 408). */
        REQUEST_BODY("request_body"),
        /** A fragmented WebSocket message not complete within {@code WS_FRAGMENT_TIMEOUT_MS} (closed 1008). */
        WS_FRAGMENT("ws_fragment");

        private final String tag;

        Timeout(String tag) {
            this.tag = tag;
        }
    }

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
        checksShared = counter(
                registry,
                "aura.ws.subscription.checks.shared",
                "postgres_changes checks answered by an identical check already in flight (one request to the cdc-worker)");
        relayLinkLosses =
                counter(registry, "aura.relay.link.losses", "NATS link drops (postgres_changes subscribers were told)");
        changeDeliveries = counter(registry, "aura.ws.postgres.changes.delivered", "postgres_changes frames sent");
        meters = registry;
        resumed = Counter.builder("aura.ws.resume")
                .tag("outcome", "resumed")
                .tag("reason", "")
                .description("postgres_changes resumes by outcome (docs/design.md R)")
                .register(registry);
        replayedEvents = counter(
                registry, "aura.ws.resume.replayed.events", "postgres_changes events replayed from history by resumes");
        for (Timeout kind : Timeout.values()) {
            timeouts.put(
                    kind,
                    Counter.builder("aura.ws.connection.timeouts")
                            .tag("kind", kind.tag)
                            .description("connections closed by a connection-level time bound")
                            .register(registry));
        }
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

    /** A join's subscription check joined an identical one in flight instead of asking the cdc-worker. */
    public void checkShared() {
        checksShared.increment();
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

    /** A connection was closed by the time bound {@code kind}. */
    public void timedOut(Timeout kind) {
        timeouts.get(kind).increment();
    }

    public void changesDelivered(int n) {
        changeDeliveries.increment(n);
    }

    /** A resume replayed {@code events} changes. */
    public void resumed(int events) {
        resumed.increment();
        replayedEvents.increment(events);
    }

    /** A resume was not possible for {@code reason}. */
    public void resumeNotPossible(String reason) {
        Counter.builder("aura.ws.resume")
                .tag("outcome", "not_possible")
                .tag("reason", reason)
                .description("postgres_changes resumes by outcome (docs/design.md R)")
                .register(meters)
                .increment();
    }

    /**
     * A WebSocket or SSE connection was refused at connect for {@code reason}: the refusal's code
     * ({@code MalformedJWT}, {@code JwtSignatureError}, {@code InvalidJWTToken}, {@code ApiKeyMissing},
     * {@code ConnectionRateLimitReached}), one of a closed list.
     */
    public void connectionRefused(String reason) {
        Counter.builder("aura.ws.connections.refused")
                .tag("reason", reason)
                .description("connections refused at connect, by reason")
                .register(meters)
                .increment();
    }
}
