package dev.aura.realtime.cdc.pipeline;

import dev.aura.realtime.cdc.event.BuiltEvent;
import dev.aura.realtime.cdc.event.Delivery;
import dev.aura.realtime.cdc.event.RowChange;
import dev.aura.realtime.cdc.failure.CdcFailure;
import dev.aura.realtime.cdc.failure.CdcReason;
import dev.aura.realtime.cdc.failure.RowFault;
import dev.aura.realtime.cdc.failure.RowFaultException;
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
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * One lane's batch step: builds each change of a run into an event, matches it against the
 * {@link SubscriptionRegistry}, asks the {@link AccessPolicy} once for the whole run and publishes
 * the allowed deliveries, with the messages-table rows (Broadcast from Database, docs/design.md H2)
 * published in the run's commit order among them. Not thread-safe: one per lane thread.
 *
 * <p>Total per change (docs/design.md C13): whatever one change makes fail on its way (decode,
 * build, match, check, render, publish) is that change's {@link RowFault}, handled by {@link
 * RowFaults} (its subscribers told, the change quarantined), and the run goes on. Only an
 * infrastructure failure ({@link CdcFailure}, a fenced term, an interrupt) fails the run, which is
 * then read again from the slot.
 *
 * <p>Slow is late (C14): a change the policy calls {@link AccessPolicy.Decision#late() late}, and
 * every later change of its project, goes to the project's {@link LateLane} unpublished; a project
 * already late sends every change there, in commit order.
 */
final class BatchPublisher {
    /** One element of a run, in commit order. */
    private sealed interface Item permits Change, MessageRow, Late, Fault {
        Work work();
    }

    /** A row change, matched, whose deliveries the access policy decides. */
    private record Change(Work work, AccessPolicy.Candidates candidates) implements Item {}

    /** A messages-table row, published as it is; ws-front applies the channel's read check. */
    private record MessageRow(Work work, MessageRows.Rendered rendered) implements Item {}

    /** A change of a project that is late: held in its late lane. */
    private record Late(Work work) implements Item {}

    /** A change that met its fault before the check; {@code event}, {@code matched} when known. */
    private record Fault(Work work, RowFaults.Met met) implements Item {}

    /** One change of a run and the project it belongs to. */
    record Work(RowChange change, String projectId) {}

    private final EventBuilder builder;
    private final SubscriptionRegistry registry;
    private final AccessPolicy policy;
    private final ChangePublisher publisher;
    private final LateHolds late;
    private final RowFaults faults;
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
     * @param late the late lanes this lane hands slow projects' changes to ({@link LateHolds#NONE}
     *     for the late lane itself)
     * @param gate the fencing gate of the current leadership term (null before the first term)
     * @param unconfirmedBytes bytes published before waiting for NATS to confirm them
     * @param flushTimeout how long such a flush waits
     */
    BatchPublisher(
            EventBuilder builder,
            SubscriptionRegistry registry,
            AccessPolicy policy,
            ChangePublisher publisher,
            LateHolds late,
            RowFaults faults,
            CdcMetrics metrics,
            Supplier<LeaderGate> gate,
            long unconfirmedBytes,
            Duration flushTimeout) {
        this.builder = builder;
        this.registry = registry;
        this.policy = policy;
        this.publisher = publisher;
        this.late = late;
        this.faults = faults;
        this.metrics = metrics;
        this.gate = gate;
        this.unconfirmedBytes = unconfirmedBytes;
        this.flushTimeout = flushTimeout;
    }

    /** Builds, matches, checks and publishes a run of changes in order. */
    void publish(List<Work> run) throws CdcFailure, FencedException, InterruptedException {
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
        List<Change> changes = new ArrayList<>(run.size());
        for (Work w : run) {
            Item item = item(w);
            if (item instanceof Change c) {
                changes.add(c);
            }
            if (item != null) {
                items.add(item);
            }
        }
        Map<Change, AccessPolicy.Decision> decisions = decide(changes);
        LeaderGate g = gate.get();
        Set<String> lateFromHere = new HashSet<>();
        for (Item item : items) {
            Work w = item.work();
            if (lateFromHere.contains(w.projectId()) && !(item instanceof Fault)) {
                hold(g, w, item instanceof Change c ? c : null);
                continue;
            }
            switch (item) {
                case Late l -> hold(g, w, null);
                case Fault f -> faults.handle(g, this::send, f.met());
                case MessageRow m -> sendMessage(g, w, m.rendered());
                case Change c -> {
                    AccessPolicy.Decision d = decisions.get(c);
                    if (d == null) {
                        continue; // its check failed: handled as its fault in decide
                    }
                    if (d.late()) {
                        late.markLate(w.projectId());
                        lateFromHere.add(w.projectId());
                        hold(g, w, c);
                        continue;
                    }
                    sendChange(g, w, c.candidates(), d);
                }
            }
        }
    }

    /** The run element of one change, or null for a messages-table row with nothing to send. */
    private Item item(Work w) throws CdcFailure, InterruptedException {
        if (late.isLate(w.projectId())) {
            return new Late(w);
        }
        RowChange change = w.change();
        if (change.undecodable() != null) {
            return new Fault(w, RowFaults.met(w, RowFault.UNPROCESSABLE, "decode", change.undecodable()));
        }
        String stage = "build";
        BuiltEvent e = null;
        try {
            if (MessageRows.isMessageRow(change, w.projectId())) {
                stage = "render";
                MessageRows.Rendered m = messageRows.render(change, w.projectId(), publisher.maxPayload());
                return m == null ? null : new MessageRow(w, m);
            }
            e = builder.build(change, w.projectId());
            stage = "match";
            List<SubscriptionEntry> matched = matcher.match(e, registry.candidates(w.projectId(), e));
            return new Change(w, new AccessPolicy.Candidates(e, matched, change.xid()));
        } catch (Exception | StackOverflowError ex) {
            return new Fault(w, RowFaults.met(w, stage, e, null, ex));
        }
    }

    /**
     * The policy's decisions for the run's changes. When the batched call fails for a reason that
     * is not infrastructure, each change is asked for alone, and a change whose own check fails
     * is its fault (handled here, so it has no decision).
     */
    private Map<Change, AccessPolicy.Decision> decide(List<Change> changes)
            throws CdcFailure, FencedException, InterruptedException {
        Map<Change, AccessPolicy.Decision> out = new HashMap<>();
        if (changes.isEmpty()) {
            return out;
        }
        List<AccessPolicy.Candidates> batch = new ArrayList<>(changes.size());
        changes.forEach(c -> batch.add(c.candidates()));
        try {
            List<AccessPolicy.Decision> all = policy.decide(batch);
            for (int i = 0; i < changes.size(); i++) {
                out.put(changes.get(i), all.get(i));
            }
            return out;
        } catch (RuntimeException | StackOverflowError batchFailed) {
            RowFaults.rethrowInfrastructure(batchFailed);
        }
        LeaderGate g = gate.get();
        for (Change c : changes) {
            try {
                out.put(c, policy.decide(List.of(c.candidates())).get(0));
            } catch (RuntimeException | StackOverflowError one) {
                RowFaults.rethrowInfrastructure(one);
                faults.handle(
                        g,
                        this::send,
                        RowFaults.met(
                                c.work(),
                                "check",
                                c.candidates().event(),
                                c.candidates().matched(),
                                one));
            }
        }
        return out;
    }

    /** Hands a change to its project's late lane; a full lane makes it the change's fault. */
    private void hold(LeaderGate g, Work w, Change c) throws CdcFailure, FencedException, InterruptedException {
        if (late.hold(w.change(), w.projectId())) {
            metrics.changesLate.increment();
            return;
        }
        BuiltEvent e = c == null ? null : c.candidates().event();
        List<SubscriptionEntry> matched = c == null ? null : c.candidates().matched();
        faults.handle(
                g,
                this::send,
                new RowFaults.Met(
                        w, RowFault.CHECK_BACKLOG_FULL, "late", "the project's late lane is full", e, matched));
    }

    private void sendMessage(LeaderGate g, Work w, MessageRows.Rendered r)
            throws CdcFailure, FencedException, InterruptedException {
        try {
            checkSubject(r.subject(), "topic");
            send(g, r.subject(), r.eventId(), r.body());
        } catch (RuntimeException | StackOverflowError | RowFaultException ex) {
            RowFaults.rethrowInfrastructure(ex);
            faults.handle(g, this::send, RowFaults.met(w, "publish", null, null, ex));
        }
    }

    private void sendChange(LeaderGate g, Work w, AccessPolicy.Candidates c, AccessPolicy.Decision d)
            throws CdcFailure, FencedException, InterruptedException {
        BuiltEvent e = c.event();
        if (d.deliveries().isEmpty() && d.timedOut().isEmpty()) {
            metrics.eventsUnmatched.increment();
        }
        List<String> allowed = new ArrayList<>();
        d.deliveries().forEach(x -> allowed.addAll(x.subIds()));
        try {
            String subject = subject(e);
            checkSubject(subject, "table");
            List<byte[]> bodies = new ArrayList<>(d.deliveries().size());
            for (Delivery x : d.deliveries()) {
                bodies.add(render(e, x));
            }
            for (int i = 0; i < bodies.size(); i++) {
                send(g, subject, EventRenderer.messageId(e, d.deliveries().get(i)), bodies.get(i));
            }
        } catch (RuntimeException | StackOverflowError | IOException | RowFaultException ex) {
            RowFaults.rethrowInfrastructure(ex);
            faults.handle(g, this::send, RowFaults.met(w, "render", e, allowedOnly(c, allowed), ex));
            return;
        }
        if (!d.timedOut().isEmpty()) {
            faults.handle(
                    g,
                    this::send,
                    new RowFaults.Met(
                            w,
                            RowFault.CHECK_TIMED_OUT,
                            "check",
                            "the RLS check did not finish alone in the late lane",
                            e,
                            allowedOnly(c, d.timedOut())));
        }
    }

    /** The matched bindings among {@code subIds}. */
    private static List<SubscriptionEntry> allowedOnly(AccessPolicy.Candidates c, List<String> subIds) {
        Set<String> ids = new HashSet<>(subIds);
        List<SubscriptionEntry> out = new ArrayList<>();
        for (SubscriptionEntry s : c.matched()) {
            if (ids.contains(s.subId())) {
                out.add(s);
            }
        }
        return out;
    }

    /** A subject jnats would refuse (its control line is at most 4,096 bytes) is the change's fault. */
    static void checkSubject(String subject, String what) throws RowFaultException {
        if (subject.length() > RowFaults.MAX_SUBJECT_BYTES) { // subjects are ASCII: characters are bytes
            throw new RowFaultException(RowFault.TOO_LARGE, "the " + what + " is too long for a NATS subject");
        }
    }

    /** The one send path: fence, publish, count, and flush once too much is unconfirmed. */
    void send(LeaderGate g, String subject, String messageId, byte[] body)
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
     * event's rows are cut to their small values with {@code Error 413} (docs/design.md C6); when
     * even that does not fit, the change is {@link RowFault#TOO_LARGE}.
     */
    private byte[] render(BuiltEvent e, Delivery d) throws IOException, RowFaultException {
        byte[] body = renderer.render(e, d);
        if (body.length > publisher.maxPayload()) {
            body = renderer.render(builder.cutToSmallValues(e), d);
            metrics.eventsTooLarge.increment();
            if (body.length > publisher.maxPayload()) {
                throw new RowFaultException(
                        RowFault.TOO_LARGE, "the change is larger than a NATS message even cut to its small values");
            }
        } else if (e.payloadTooLarge()) {
            metrics.eventsTooLarge.increment();
        }
        return body;
    }
}
