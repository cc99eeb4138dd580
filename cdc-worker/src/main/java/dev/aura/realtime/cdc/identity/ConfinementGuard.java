package dev.aura.realtime.cdc.identity;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * The confinement guard (docs/security.md, "The confinement cannot be edited"): two event triggers
 * of the platform, {@value #DDL_TRIGGER} and {@value #DROP_TRIGGER}, running
 * {@code aura_platform.confinement_guard()}, which refuse every DDL command on an object that
 * confines projects (a project's runners, the schemas {@code aura_rls}, {@code aura_platform} and
 * {@code auth} and their objects) by anyone but the platform. Its SQL is the file
 * {@value #RESOURCE}, which a superuser platform login runs at start and an operator runs by hand
 * otherwise; {@link #IN_PLACE} tells whether it is installed as this build writes it.
 */
public final class ConfinementGuard {
    /** The file installing the guard (idempotent; needs a superuser). */
    public static final String RESOURCE = "/sql/confinement-guard.sql";

    public static final String DDL_TRIGGER = "aura_confinement_ddl";
    public static final String DROP_TRIGGER = "aura_confinement_drop";
    private static final String QUOTE = "$guard$";

    /**
     * One boolean: both event triggers exist on their events, enabled, for every command, and run
     * the guard function with exactly {@link #body()} ({@code ?}). Every name is qualified, so a
     * session whose {@code search_path} tenant code changed still reads the catalogs.
     */
    public static final String IN_PLACE = "SELECT pg_catalog.count(*) OPERATOR(pg_catalog.=) 2"
            + " FROM pg_catalog.pg_event_trigger e"
            + " JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) e.evtfoid"
            + " WHERE ((e.evtname OPERATOR(pg_catalog.=) '" + DDL_TRIGGER + "'"
            + " AND e.evtevent OPERATOR(pg_catalog.=) 'ddl_command_end')"
            + " OR (e.evtname OPERATOR(pg_catalog.=) '" + DROP_TRIGGER + "'"
            + " AND e.evtevent OPERATOR(pg_catalog.=) 'sql_drop'))"
            + " AND e.evtenabled OPERATOR(pg_catalog.<>) 'D' AND e.evttags IS NULL"
            + " AND p.pronamespace OPERATOR(pg_catalog.=) 'aura_platform'::pg_catalog.regnamespace"
            + " AND p.proname OPERATOR(pg_catalog.=) 'confinement_guard' AND NOT p.prosecdef"
            + " AND p.prosrc OPERATOR(pg_catalog.=) ?";

    private final String sql;
    private final String body;

    private ConfinementGuard(String sql) {
        this.sql = sql;
        int start = sql.indexOf(QUOTE);
        int end = sql.indexOf(QUOTE, start + QUOTE.length());
        if (start < 0 || end < 0) {
            throw new IllegalStateException(RESOURCE + " has no " + QUOTE + " body");
        }
        this.body = sql.substring(start + QUOTE.length(), end);
    }

    /** The guard of this build, read from {@value #RESOURCE}. */
    public static ConfinementGuard load() {
        try (InputStream in = ConfinementGuard.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is missing from the cdc-worker");
            }
            return new ConfinementGuard(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The statements installing the guard, as one script (run in one transaction). */
    public String sql() {
        return sql;
    }

    /** The guard function's body ({@code prosrc}) as this build writes it: the parameter of {@link #IN_PLACE}. */
    public String body() {
        return body;
    }
}
