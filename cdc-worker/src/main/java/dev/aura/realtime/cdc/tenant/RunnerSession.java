package dev.aura.realtime.cdc.tenant;

import java.sql.SQLException;
import java.util.List;

/**
 * A tenant transaction as the work inside it sees it (docs/design.md I): tenant code is reached
 * only through a call of a project's runner, and nothing else of the session is in reach. The
 * statements of the join-time checks, the RLS checks and the janitor are written in their own
 * packages against this, and still run only here, set up, watched, classified and reset by
 * {@link TenantDb}.
 */
public interface RunnerSession {
    /**
     * Runs {@code query} through the runner {@code runner} (a quoted {@code aura_rls} function
     * name, {@code identity.ProjectIdentity#runner}) with {@code args} as its {@code $1}: tenant
     * code the query reaches runs as the runner's owner, a role of one project. Answers the rows'
     * {@code text[]} values.
     */
    List<String[]> viaRunner(String runner, String query, Object[] args) throws SQLException;

    /** Sets what {@code realtime.topic()} answers for the rest of the transaction (our SQL, no tenant code). */
    void setTopic(String topic) throws SQLException;

    /**
     * How the transaction ends. Tenant transactions are read-only unless a private-channel check
     * must insert (docs/design.md H1): the write check and the read check's probe rows are rolled
     * back; only a persisted broadcast and the janitor commit.
     */
    enum Mode {
        READ_ONLY,
        WRITE_ROLLBACK,
        WRITE_COMMIT
    }

    /** Work done inside a tenant transaction. */
    @FunctionalInterface
    interface Body<T> {
        T run(RunnerSession session) throws SQLException;
    }

    /** One check of a batch ({@link TenantDb#eachSession}): its claims, its {@code realtime.topic}, and its one runner call. */
    interface Item<R> {
        String claims();

        /** The topic {@code realtime.topic()} answers, or null for none. */
        String topic();

        R run(RunnerSession session) throws SQLException;
    }

    /** An item's outcome: {@code value}, or how its tenant code failed. */
    record Outcome<R>(R value, TenantDb.Failure failure) {}

    /** The tenant's statement failed (not an outage). */
    final class TenantFailure extends Exception {
        private final TenantDb.Failure failure;

        TenantFailure(TenantDb.Failure failure) {
            super(failure.kind() + " " + failure.sqlState(), null, false, false);
            this.failure = failure;
        }

        public TenantDb.Failure failure() {
            return failure;
        }
    }
}
