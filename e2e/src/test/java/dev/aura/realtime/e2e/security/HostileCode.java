package dev.aura.realtime.e2e.security;

import dev.aura.realtime.e2e.security.HostileProjects.Project;
import java.util.List;

/** The hostile project's login takeover, as SQL it installs in its own schema (see {@link #create}). */
final class HostileCode {
    /** The worker's advisory-lock keys (PlatformSchema.LOCK_KEY and +1): bootstrap and realtime-schema provisioning. */
    static final long BOOTSTRAP_LOCK = 0x4155524152544CL;

    private HostileCode() {}

    /**
     * Creates {@code A.hostile()}, SECURITY INVOKER, returning true: as the role it is called with,
     * after {@code RESET ROLE}, and after {@code SET ROLE r} and {@code set_config('role', r)} for
     * every shared or victim role r, it changes the password and expiry of {@code session_user}
     * and {@code current_user}, sets their per-role settings, makes the runners it owns
     * {@code SECURITY INVOKER}, grants itself into the client roles
     * and them to itself, and takes advisory locks (the worker's own keys too) it leaves held; then,
     * as the login, it cancels and terminates every other backend, and finally returns to the role
     * it was called with (so the statement that called it goes on). It runs once per transaction
     * and calling role, so a statement firing it from several triggers stays within its timeout.
     * Each statement in its own block, so one refusal does not stop the next; nothing in it needs
     * A's schema once the role changed.
     */
    static String create(HostileProjects h) {
        Project a = h.a;
        Project b = h.b;
        String each = "BEGIN %s; EXCEPTION WHEN OTHERS THEN NULL; END;\n";
        StringBuilder attempts = new StringBuilder();
        for (String target : List.of("session_user", "current_user")) {
            attempts.append(each.formatted("EXECUTE format('ALTER ROLE %I PASSWORD %L', " + target + ", 'pwned')"));
            attempts.append(
                    each.formatted("EXECUTE format('ALTER ROLE %I VALID UNTIL %L', " + target + ", '2000-01-01')"));
            attempts.append(each.formatted("EXECUTE format('ALTER ROLE %I SET search_path = %I, pg_catalog', " + target
                    + ", '" + a.schema() + "')"));
            attempts.append(
                    each.formatted("EXECUTE format('GRANT %I TO aura_anon, aura_authenticated', " + target + ")"));
            attempts.append("FOREACH g IN ARRAY ARRAY['aura_anon', 'aura_authenticated', '" + b.owner()
                    + "', 'pg_read_all_data', 'pg_signal_backend'] LOOP\n  "
                    + each.formatted("EXECUTE format('GRANT %I TO %I', g, " + target + ")") + "END LOOP;\n");
        }
        // every function of aura_rls the role owns (a project's runners) made SECURITY INVOKER, so
        // the next check on the shared login would run tenant code as that login (docs/design.md I)
        attempts.append("FOR g IN SELECT p.oid::regprocedure::text FROM pg_proc p"
                + " WHERE p.pronamespace = 'aura_rls'::regnamespace AND pg_has_role(p.proowner, 'USAGE') LOOP\n  "
                + each.formatted("EXECUTE format('ALTER FUNCTION %s SECURITY INVOKER', g)") + "END LOOP;\n");
        for (long key : List.of(22L, BOOTSTRAP_LOCK, BOOTSTRAP_LOCK + 1)) {
            attempts.append(each.formatted("PERFORM pg_try_advisory_lock(" + key + ")"));
        }
        String hostile = a.s() + ".hostile()";
        h.asOwner(
                a,
                "CREATE FUNCTION " + hostile + " RETURNS boolean LANGUAGE plpgsql AS $f$\n"
                        + "DECLARE orig text := current_user; m text; g text; p int; modes text[];\n"
                        + "done text := 'aura_hostile.r' || (SELECT oid FROM pg_roles WHERE rolname = current_user);\n"
                        + "BEGIN\n"
                        // once per transaction and calling role: all of it must fit in one statement timeout
                        + "IF current_setting(done, true) = 'yes' THEN RETURN true; END IF;\n"
                        + "PERFORM set_config(done, 'yes', true);\n"
                        + "SELECT ARRAY['SELECT 1', 'RESET ROLE'] || array_agg(format('SET ROLE %I', rolname))"
                        + " || array_agg(format('SELECT set_config(''role'', %L, true)', rolname)) INTO modes"
                        + " FROM pg_roles WHERE rolname IN ('postgres', 'aura_anon', 'aura_authenticated', '"
                        + b.owner() + "', session_user) OR starts_with(rolname, '" + b.rolePrefix() + "');\n"
                        + "FOREACH m IN ARRAY modes LOOP\n"
                        + "BEGIN PERFORM set_config('role', orig, true); EXCEPTION WHEN OTHERS THEN NULL; END;\n"
                        + "IF m <> 'SELECT 1' THEN BEGIN EXECUTE m; EXCEPTION WHEN OTHERS THEN CONTINUE; END; END IF;\n"
                        + attempts
                        + "END LOOP;\n"
                        + each.formatted("RESET ROLE")
                        + "FOR p IN SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid() LOOP\n"
                        + each.formatted("PERFORM pg_cancel_backend(p)")
                        + each.formatted("PERFORM pg_terminate_backend(p)")
                        + "END LOOP;\n"
                        + each.formatted("PERFORM set_config('role', orig, true)")
                        + "RETURN true;\nEND $f$",
                "GRANT EXECUTE ON FUNCTION " + hostile + " TO PUBLIC");
        return hostile;
    }
}
