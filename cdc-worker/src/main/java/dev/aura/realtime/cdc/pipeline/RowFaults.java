package dev.aura.realtime.cdc.pipeline;

import dev.aura.realtime.cdc.event.BuiltEvent;
import dev.aura.realtime.cdc.event.Delivery;
import dev.aura.realtime.cdc.event.HeldChange;
import dev.aura.realtime.cdc.event.Quarantined;
import dev.aura.realtime.cdc.event.RowChange;
import dev.aura.realtime.cdc.event.Tuple;
import dev.aura.realtime.cdc.event.View;
import dev.aura.realtime.cdc.failure.CdcFailure;
import dev.aura.realtime.cdc.failure.CdcReason;
import dev.aura.realtime.cdc.failure.Faults;
import dev.aura.realtime.cdc.failure.LogCode;
import dev.aura.realtime.cdc.failure.RowFault;
import dev.aura.realtime.cdc.fence.FencedException;
import dev.aura.realtime.cdc.fence.LeaderGate;
import dev.aura.realtime.cdc.health.RowFaultLedger;
import dev.aura.realtime.cdc.match.Matcher;
import dev.aura.realtime.cdc.metrics.CdcMetrics;
import dev.aura.realtime.cdc.registry.SubscriptionRegistry;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What happens to a change that met its {@link RowFault} (docs/design.md C13): it is kept in its
 * project's quarantine (the wal2json row, the fault, the stage, our own words), its project's
 * subscribers get an error in Supabase's shape, it is counted ({@code aura_cdc_quarantined_total},
 * {@code /health} {@code quarantine}) and logged with a code, the project id and the event id,
 * never the tenant's data. The run goes on; the slot advances past it once the quarantine stored it.
 *
 * <p>Who is told: a postgres_changes change goes, with no values and {@code errors:
 * [<fault's error>]}, to the bindings it matched, or, when matching itself failed, to every binding
 * of its table whose event matches (filters cannot be evaluated): Supabase's own {@code Error 401}
 * events show that a change happened to those who may not read it, and nothing more is shown
 * here. A messages-table row goes to its topic as {@code {"error": ..., "id": ...}} (the channel's
 * read check applies in ws-front), unless its topic cannot be a subject at all: no channel can
 * have that topic (ws-front refuses joins to topics over 255 bytes), so only the quarantine and
 * the counters know.
 */
public final class RowFaults {
    private static final Logger log = LoggerFactory.getLogger(RowFaults.class);

    /**
     * The longest subject published: jnats refuses a control line over 4,096 bytes, which holds the
     * subject, a JetStream reply subject and the sizes.
     */
    static final int MAX_SUBJECT_BYTES = 3_900;

    /** Keeps a change in its project's quarantine. */
    @FunctionalInterface
    public interface Keeper {
        void keep(HeldChange change, Quarantined why) throws CdcFailure;
    }

    /** Sends one message on the lane's send path (fenced, counted, flow-controlled). */
    @FunctionalInterface
    interface Sender {
        void send(LeaderGate gate, String subject, String messageId, byte[] body)
                throws CdcFailure, FencedException, InterruptedException;
    }

    /**
     * A change and its fault.
     *
     * @param event the built event, when building got that far
     * @param matched the bindings to tell, when matching got that far (null: every binding of the table)
     */
    record Met(
            BatchPublisher.Work work,
            RowFault fault,
            String stage,
            String detail,
            BuiltEvent event,
            List<SubscriptionEntry> matched) {}

    private final Keeper keeper;
    private final SubscriptionRegistry registry;
    private final RowFaultLedger ledger;
    private final CdcMetrics metrics;
    private final EventRenderer renderer = new EventRenderer();
    private final EventJson json = new EventJson();
    private final MessageRows messageRows = new MessageRows(MessageRows.MAX_PAYLOAD_BYTES);

    RowFaults(Keeper keeper, SubscriptionRegistry registry, RowFaultLedger ledger, CdcMetrics metrics) {
        this.keeper = keeper;
        this.registry = registry;
        this.ledger = ledger;
        this.metrics = metrics;
    }

    /** A fault found by our own code. */
    static Met met(BatchPublisher.Work w, RowFault fault, String stage, String detail) {
        return new Met(w, fault, stage, detail, null, null);
    }

    /**
     * The fault of a throwable met while processing one change.
     *
     * @throws CdcFailure when the throwable is an infrastructure failure (the run is read again)
     */
    static Met met(BatchPublisher.Work w, String stage, BuiltEvent event, List<SubscriptionEntry> matched, Throwable t)
            throws CdcFailure {
        RowFault fault = Faults.rowFault(t);
        if (fault == null) {
            throw infrastructure(t);
        }
        return new Met(w, fault, stage, Faults.describe(t), event, matched);
    }

    /** Rethrows {@code t} when it is an infrastructure failure; returns when it is one change's fault. */
    static void rethrowInfrastructure(Throwable t) throws CdcFailure, FencedException, InterruptedException {
        if (t instanceof FencedException f) {
            throw f;
        }
        if (t instanceof InterruptedException i) {
            throw i;
        }
        if (Faults.rowFault(t) == null) {
            throw infrastructure(t);
        }
    }

    private static CdcFailure infrastructure(Throwable t) {
        if (t instanceof CdcFailure f) {
            return f;
        }
        if (t instanceof SQLException e) {
            return CdcFailure.classify(e);
        }
        if (t instanceof Error e) {
            throw e;
        }
        return CdcFailure.retriable(
                CdcReason.ERROR, "infrastructure failure (" + t.getClass().getName() + ")", t);
    }

    /** Quarantines the change, tells its subscribers, counts and logs it. */
    void handle(LeaderGate gate, Sender sender, Met m) throws CdcFailure, FencedException, InterruptedException {
        BatchPublisher.Work w = m.work();
        RowChange change = w.change();
        keeper.keep(HeldChange.of(change, w.projectId()), new Quarantined(m.fault(), m.stage(), m.detail()));
        metrics.quarantined(w.projectId(), m.fault().code());
        ledger.quarantined(w.projectId(), m.fault());
        log.warn(
                "[{}] project {} change {}: {} at {} ({}); kept in the project's quarantine",
                LogCode.ROW_QUARANTINED,
                w.projectId(),
                change.eventId(),
                m.fault().code(),
                m.stage(),
                m.detail());
        try {
            tell(gate, sender, m);
        } catch (CdcFailure | FencedException | InterruptedException e) {
            throw e;
        } catch (Exception | StackOverflowError e) {
            // the error event itself could not be made: the quarantine and the counters still know
            log.warn(
                    "[{}] project {} change {}: its error event could not be sent ({})",
                    LogCode.ROW_QUARANTINED,
                    w.projectId(),
                    change.eventId(),
                    Faults.describe(e));
        }
    }

    private void tell(LeaderGate gate, Sender sender, Met m) throws Exception {
        BatchPublisher.Work w = m.work();
        RowChange change = w.change();
        if (MessageRows.isMessageRow(change, w.projectId())) {
            MessageRows.Rendered stub =
                    messageRows.errorStub(change, w.projectId(), m.fault().clientError());
            if (stub != null && stub.subject().length() <= MAX_SUBJECT_BYTES) {
                sender.send(gate, stub.subject(), stub.eventId(), stub.body());
            }
            return;
        }
        List<SubscriptionEntry> to = m.matched() != null ? m.matched() : tableBindings(w.projectId(), change);
        if (to.isEmpty()) {
            return;
        }
        List<String> subIds = new ArrayList<>(to.size());
        to.forEach(s -> subIds.add(s.subId()));
        BuiltEvent e = errorEvent(change, w.projectId());
        String subject = Subjects.changes(w.projectId(), change.table());
        if (subject.length() > MAX_SUBJECT_BYTES) {
            return;
        }
        Delivery d = new Delivery(
                new View(java.util.Set.of(), false, List.of(m.fault().clientError())), subIds);
        sender.send(gate, subject, EventRenderer.messageId(e, d), renderer.render(e, d));
    }

    /** The bindings of the change's table whose event matches (filters are not evaluated). */
    private List<SubscriptionEntry> tableBindings(String projectId, RowChange change) {
        List<SubscriptionEntry> out = new ArrayList<>();
        String type;
        try {
            type = change.type();
        } catch (IllegalStateException e) {
            return out;
        }
        for (SubscriptionEntry s : registry.candidates(projectId, change.table())) {
            if (Matcher.eventMatches(s.event(), type)) {
                out.add(s);
            }
        }
        return out;
    }

    /** The change with no values: table, type, commit time, empty rows. */
    private BuiltEvent errorEvent(RowChange c, String projectId) {
        Tuple empty = new Tuple(List.of(), List.of(), List.of());
        boolean hasRecord = c.action() == 'I' || c.action() == 'U';
        boolean hasOld = c.action() == 'U' || c.action() == 'D';
        return new BuiltEvent(
                c.eventId(),
                projectId,
                c.schema(),
                c.table(),
                c.type(),
                c.commitTimestamp(),
                Map.of(),
                List.of(),
                hasRecord ? empty : null,
                hasOld ? empty : null,
                false,
                json);
    }
}
