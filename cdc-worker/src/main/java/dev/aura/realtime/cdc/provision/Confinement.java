package dev.aura.realtime.cdc.provision;

import dev.aura.realtime.cdc.catalog.PlatformDb;
import dev.aura.realtime.cdc.identity.ConfinementGuard;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether Postgres keeps the confinement uneditable by the confined (docs/security.md, "The
 * confinement cannot be edited"): the {@link ConfinementGuard} is installed, enabled and this
 * build's. A superuser platform login installs it at every start ({@link #install}); a platform
 * login without superuser cannot, and then the statements that commit tenant code (persisted
 * broadcasts, the janitor) are refused, since a deferred trigger firing at their {@code COMMIT}
 * could edit the project's runners unseen ({@code /health} {@code tenant_sql.confinement},
 * {@code [ConfinementUnguarded]}). The checks that roll back are unaffected: what tenant code edits
 * there is rolled back with them.
 *
 * <p>{@link #status} is read on first use and again at every {@link #refresh} (the provisioning
 * pass); the project login checks the guard again before each commit (tenant.ProjectLogins), so
 * a guard dropped between two passes stops commits at once. Thread-safe.
 */
public final class Confinement {
    private static final Logger log = LoggerFactory.getLogger(Confinement.class);

    /**
     * As {@code /health} shows it.
     *
     * @param guarded whether the guard is in place, so the committing paths run
     * @param reasonCode why not ({@link #UNGUARDED}), or null
     * @param reason details for operators (never tenant text), or null
     */
    public record Status(boolean guarded, String reasonCode, String reason) {
        /** {@code tenant_sql.confinement.reason_code}: no guard as this build installs it. */
        public static final String UNGUARDED = "confinement_unguarded";

        /** Before the worker looked. */
        public static final Status STARTING = new Status(false, "starting", "not looked at yet");
    }

    private final PlatformDb db;
    private final ConfinementGuard guard = ConfinementGuard.load();
    private volatile Status status;

    Confinement(PlatformDb db) {
        this.db = db;
    }

    /**
     * Installs the guard on {@code c} (inside the bootstrap's transaction and advisory lock) when
     * its login is a superuser.
     *
     * @return whether it was installed
     */
    static boolean install(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            try (ResultSet rs = s.executeQuery("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")) {
                if (!rs.next() || !rs.getBoolean(1)) {
                    return false;
                }
            }
            s.execute(ConfinementGuard.load().sql());
            return true;
        }
    }

    /** The last known status, read now if never read. */
    public Status status() {
        Status s = status;
        return s != null ? s : refresh();
    }

    /**
     * Reads the status again; logs {@code [ConfinementUnguarded]} when the guard is missing and
     * was not before. When the catalog cannot be read, the previous status stays (unguarded if none).
     */
    public Status refresh() {
        Status before = status;
        Status now;
        try (Connection c = db.connection();
                PreparedStatement ps = c.prepareStatement("SELECT (" + ConfinementGuard.IN_PLACE + "),"
                        + " (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)")) {
            ps.setString(1, guard.body());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                now = rs.getBoolean(1) ? new Status(true, null, null) : unguarded(rs.getBoolean(2));
            }
        } catch (SQLException e) {
            if (before != null) {
                return before;
            }
            now = new Status(false, Status.UNGUARDED, "the guard could not be looked up: " + e.getMessage());
        }
        status = now;
        if (!now.guarded() && (before == null || before.guarded())) {
            log.warn("[ConfinementUnguarded] {}", now.reason());
        } else if (now.guarded() && before != null && !before.guarded()) {
            log.info("the confinement guard is in place: persisted broadcasts and the janitor commit again");
        }
        return now;
    }

    private static Status unguarded(boolean superuser) {
        return new Status(
                false,
                Status.UNGUARDED,
                "no event trigger " + ConfinementGuard.DDL_TRIGGER + "/" + ConfinementGuard.DROP_TRIGGER
                        + " guards the platform's objects as this build installs it"
                        + (superuser
                                ? " (it is installed at the next start)"
                                : "; the POSTGRES_URL login is not superuser and cannot install it")
                        + ": persisted broadcasts and the janitor are refused until a superuser runs the"
                        + " cdc-worker's sql/confinement-guard.sql (docs/security.md)");
    }
}
