package dev.aura.realtime.cdc.pipeline;

import dev.aura.realtime.cdc.event.BuiltEvent;
import dev.aura.realtime.cdc.event.Delivery;
import dev.aura.realtime.cdc.event.RowChange;
import dev.aura.realtime.cdc.failure.CdcFailure;
import dev.aura.realtime.cdc.failure.CdcReason;
import dev.aura.realtime.cdc.fence.FencedException;
import dev.aura.realtime.cdc.fence.LeaderGate;
import dev.aura.realtime.cdc.match.Matcher;
import dev.aura.realtime.cdc.metrics.CdcMetrics;
import dev.aura.realtime.cdc.publish.ChangePublisher;
import dev.aura.realtime.cdc.registry.SubscriptionRegistry;
import dev.aura.realtime.cdc.rls.AccessPolicy;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import java.io.IOException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * One shard's batch step: builds each change of a run into an event, matches it against the
 * {@link SubscriptionRegistry}, asks the {@link AccessPolicy} once for the whole run and publishes
 * the allowed deliveries, with the messages-table rows (Broadcast from Database, docs/design.md H2)
 * published in the run's commit order among them. Not thread-safe: one per shard thread.
 */
final class BatchPublisher {
    /** One element of a run, in commit order. */
    private sealed interface Item permits Change, MessageRow {}

    /** A row change, matched, whose deliveries the access policy decides. */
    private record Change(AccessPolicy.Candidates candidates) implements Item {}

    /** A messages-table row, published as it is; ws-front applies the channel's read check. */
    private record MessageRow(MessageRows.Rendered rendered) implements Item {}

    /** One change of a run and the project it belongs to. */
    record Work(RowChange change, String projectId) {}

    private final EventBuilder builder;
    private final SubscriptionRegistry registry;
    private final AccessPolicy policy;
    private final ChangePublisher publisher;
    private final CdcMetrics metrics;
    private final Supplier<LeaderGate> gate;
    private final long unconfirmedBytes;
    private final Duration flushTimeout;
    private final Matcher matcher = new Matcher();
    private final EventRenderer renderer = new EventRenderer();
    private final MessageRows messageRows = new MessageRows(MessageRows.MAX_PAYLOAD_BYTES);
    /** NATS subjects by project and table: encoding the table token per event showed in profiles. */
    private final Map<String, String> subjects = new HashMap<>();
    /** Bytes published since the last flush. */
    private long unconfirmed;

    /**
     * @param gate the fencing gate of the current leadership term (null before the first term)
     * @param unconfirmedBytes bytes published before waiting for NATS to confirm them
     * @param flushTimeout how long such a flush waits
     */
    BatchPublisher(
            EventBuilder builder,
            SubscriptionRegistry registry,
            AccessPolicy policy,
            ChangePublisher publisher,
            CdcMetrics metrics,
            Supplier<LeaderGate> gate,
            long unconfirmedBytes,
            Duration flushTimeout) {
        this.builder = builder;
        this.registry = registry;
        this.policy = policy;
        this.publisher = publisher;
        this.metrics = metrics;
        this.gate = gate;
        this.unconfirmedBytes = unconfirmedBytes;
        this.flushTimeout = flushTimeout;
    }

    /** Builds, matches, checks and publishes a run of changes in order. */
    void publish(List<Work> run) throws CdcFailure, FencedException, SQLException, IOException, InterruptedException {
        if (!registry.synchronised()) {
            // matching against a registry that lacks re-put bindings would drop their changes
            // and let the slot advance past them; fail the batch so it is re-read
            throw CdcFailure.retriable(
                    CdcReason.NATS_UNAVAILABLE,
                    "subscription registry re-synchronising after a NATS reconnect (waiting for "
                            + registry.awaitedReplicas() + ")",
                    null);
        }
        List<Item> items = new ArrayList<>(run.size());
        List<AccessPolicy.Candidates> changes = new ArrayList<>(run.size());
        for (Work w : run) {
            Item item = item(w);
            if (item instanceof Change c) {
                changes.add(c.candidates());
            }
            if (item != null) {
                items.add(item);
            }
        }
        Iterator<List<Delivery>> allowed = policy.allowed(changes).iterator();
        LeaderGate g = gate.get();
        for (Item item : items) {
            switch (item) {
                case MessageRow m -> {
                    MessageRows.Rendered r = m.rendered();
                    send(g, r.subject(), r.eventId(), r.body());
                }
                case Change c -> {
                    List<Delivery> deliveries = allowed.next();
                    BuiltEvent e = c.candidates().event();
                    if (deliveries.isEmpty()) {
                        metrics.eventsUnmatched.increment();
                    }
                    for (Delivery d : deliveries) {
                        send(g, subject(e), EventRenderer.messageId(e, d), render(e, d));
                    }
                }
            }
        }
    }

    /** @return the run element of one change, or null for a messages-table row with nothing to send */
    private Item item(Work w) throws IOException, SQLException {
        if (MessageRows.isMessageRow(w.change(), w.projectId())) {
            MessageRows.Rendered m = messageRows.render(w.change(), w.projectId(), publisher.maxPayload());
            return m == null ? null : new MessageRow(m);
        }
        BuiltEvent e = builder.build(w.change(), w.projectId());
        List<SubscriptionEntry> matched = matcher.match(e, registry.candidates(w.projectId(), e));
        return new Change(new AccessPolicy.Candidates(e, matched));
    }

    /** The one send path: fence, publish, count, and flush once too much is unconfirmed. */
    private void send(LeaderGate g, String subject, String messageId, byte[] body)
            throws CdcFailure, FencedException, InterruptedException {
        if (g != null) {
            g.checkFence();
        }
        publisher.publish(subject, messageId, g == null ? 0 : g.leaseEpoch(), body);
        metrics.eventsPublished.increment();
        unconfirmed += body.length;
        if (unconfirmed > unconfirmedBytes) {
            // bounds what jnats holds for the socket: wait until NATS confirmed it
            publisher.flush(flushTimeout);
            unconfirmed = 0;
        }
    }

    private String subject(BuiltEvent e) {
        if (subjects.size() > 10_000) {
            subjects.clear(); // a bound: tables come and go
        }
        return subjects.computeIfAbsent(
                e.projectId() + '\u0000' + e.table(), k -> Subjects.changes(e.projectId(), e.table()));
    }

    /**
     * The message of one delivery; when it exceeds what NATS accepts ({@code max_payload}), the
     * event's rows are cut to their small values with {@code Error 413} (docs/design.md C6)
     * rather than failing the batch for ever.
     */
    private byte[] render(BuiltEvent e, Delivery d) throws IOException {
        byte[] body = renderer.render(e, d);
        if (body.length > publisher.maxPayload()) {
            body = renderer.render(builder.cutToSmallValues(e), d);
            metrics.eventsTooLarge.increment();
        } else if (e.payloadTooLarge()) {
            metrics.eventsTooLarge.increment();
        }
        return body;
    }
}
