package dev.aura.realtime.cdc.join;

import dev.aura.realtime.cdc.identity.ProjectIdentity;
import dev.aura.realtime.cdc.tenant.RunnerSession;
import dev.aura.realtime.cdc.tenant.TenantDb;
import dev.aura.realtime.cdc.tenant.TenantDb.Kind;
import dev.aura.realtime.cdc.tenant.TenantDb.Unavailable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The join-time casts of filter values (docs/design.md C7): whether each value casts to its
 * column's type as the project's client role, asked of Postgres so "castable" means what the
 * database accepts (the type's input function and domain checks are tenant code). One project's
 * casts of a batch of joins run in one transaction of the shared login, each in its own savepoint
 * through the project's runner ({@link TenantDb#eachSession}), on at most {@code lane}
 * connections, so join-time casts never starve the RLS checks. Thread-safe.
 */
final class JoinCasts {
    /**
     * A join-time cast to ask: {@code value} to {@code formattedType} (a {@code format_type} name
     * read from the catalog) as {@code clientRole}.
     */
    record CastAsk(String clientRole, String value, String formattedType) {}

    /** The outcome of a join-time cast. */
    enum CastVerdict {
        CASTS,
        /** The type refused the value (or its tenant-defined input or check raised). */
        INVALID,
        /** The cast did not finish within the timeouts. */
        TIMED_OUT,
        /** Every connection join-time checks may use stayed busy for the checkout timeout. */
        BUSY
    }

    private final TenantDb db;
    private final Semaphore lane;
    private final Duration checkout;

    /** On at most {@link TenantDb#joinConnections} connections of the tenant pool. */
    JoinCasts(TenantDb db) {
        this.db = db;
        this.lane = new Semaphore(Math.max(1, db.joinConnections()));
        this.checkout = db.checkoutTimeout();
    }

    /** The verdict of each distinct ask; every ask is {@link CastVerdict#BUSY} when no connection was free. */
    Map<CastAsk, CastVerdict> castAll(ProjectIdentity project, String schema, List<CastAsk> asks) throws Unavailable {
        List<CastAsk> distinct = List.copyOf(new LinkedHashSet<>(asks));
        Map<CastAsk, CastVerdict> out = new LinkedHashMap<>();
        if (distinct.isEmpty()) {
            return out;
        }
        if (db.status().off()) {
            throw new IllegalStateException("tenant SQL is off: " + db.status().reasonCode());
        }
        try {
            if (!lane.tryAcquire(checkout.toMillis(), TimeUnit.MILLISECONDS)) {
                distinct.forEach(a -> out.put(a, CastVerdict.BUSY));
                return out;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            distinct.forEach(a -> out.put(a, CastVerdict.BUSY));
            return out;
        }
        try {
            List<RunnerSession.Item<Boolean>> items = new ArrayList<>();
            for (CastAsk a : distinct) {
                items.add(new RunnerSession.Item<>() {
                    @Override
                    public String claims() {
                        return "{}";
                    }

                    @Override
                    public String topic() {
                        return null;
                    }

                    @Override
                    public Boolean run(RunnerSession s) throws java.sql.SQLException {
                        s.viaRunner(project.runner(a.clientRole()), query(a.formattedType()), new Object[] {a.value()});
                        return true;
                    }
                });
            }
            List<RunnerSession.Outcome<Boolean>> outcomes =
                    db.eachSession(schema, RunnerSession.Mode.READ_ONLY, items, null);
            for (int i = 0; i < distinct.size(); i++) {
                TenantDb.Failure f = outcomes.get(i).failure();
                out.put(
                        distinct.get(i),
                        f == null
                                ? CastVerdict.CASTS
                                : f.kind() == Kind.TIMEOUT ? CastVerdict.TIMED_OUT : CastVerdict.INVALID);
            }
            return out;
        } finally {
            lane.release();
        }
    }

    /** Whether {@code $1[1]} casts to {@code formattedType}: answers one row, or raises. */
    static String query(String formattedType) {
        return "SELECT ARRAY[(CAST(($1)[1] AS " + formattedType + ") IS NULL)::text]";
    }
}
