package dev.aura.realtime.e2e.security;

import dev.aura.realtime.e2e.security.HostileProjects.Project;

/**
 * Issue 36, point 4: what the hostile project A installs to edit the objects that confine it (its
 * runners, the other projects' runners, the schemas {@code aura_rls}, {@code aura_platform} and
 * {@code auth} and everything in them, the victim B's schemas, the event triggers), and what
 * {@link #snapshot} compares before and after.
 */
final class ConfinementAttack {
    private ConfinementAttack() {}

    /** The schemas whose objects the platform runs through, plus the victim's two. */
    private static String scope(Project b) {
        return "ARRAY['aura_rls', 'aura_platform', 'auth', '" + b.schema() + "', '" + b.schema() + "_realtime']";
    }

    /** One attempt in its own block: a refusal (ours or Postgres's) does not stop the next. */
    private static String attempt(String formatCall) {
        return "BEGIN EXECUTE " + formatCall + "; EXCEPTION WHEN OTHERS THEN NULL; END;\n";
    }

    /**
     * Creates {@code A.edit_confinement(quiet boolean)}, SECURITY INVOKER: as whoever calls it,
     * tries to switch event triggers off, then on every function in the scope (and every runner
     * wherever it is) {@code COMMENT}, {@code GRANT}, {@code REVOKE} from each grantee,
     * {@code SET search_path}, {@code RESET ALL}, {@code COST}; on the schemas and relations
     * {@code GRANT}, {@code REVOKE}, {@code COMMENT}, row level security and triggers off, a
     * policy. Unless {@code quiet} (the edits the worker's pre-commit check
     * pre-commit check {@code runnersIntact} of the build before the fix sees), also {@code SECURITY INVOKER/DEFINER}, {@code OWNER TO},
     * {@code CREATE OR REPLACE}, {@code SET SCHEMA}, {@code RENAME}, {@code DROP}, and as a project
     * role {@code REASSIGN OWNED} and {@code DROP OWNED}. Once per transaction, role and mode.
     */
    static String createEdit(HostileProjects h) {
        Project a = h.a;
        String scope = scope(h.b);
        String fn = a.s() + ".edit_confinement(quiet boolean)";
        String body = "DECLARE\n"
                + "  done text := 'aura_edit.r' || (SELECT oid FROM pg_roles WHERE rolname = current_user) || quiet;\n"
                + "  target text := '" + a.schema() + "';\n"
                + "  f record; n record; c record; g record; s text;\n"
                + "BEGIN\n"
                + "IF current_setting(done, true) = 'yes' THEN RETURN true; END IF;\n"
                + "PERFORM set_config(done, 'yes', true);\n"
                // what would switch an event trigger off
                + attempt("'SET LOCAL session_replication_role = replica'")
                + "BEGIN PERFORM set_config('session_replication_role', 'replica', true);"
                + " EXCEPTION WHEN OTHERS THEN NULL; END;\n"
                + attempt("format('CREATE FUNCTION %I.replica() RETURNS int LANGUAGE sql"
                        + " SET session_replication_role = replica AS ''SELECT 1''', target)")
                + "FOR g IN SELECT evtname FROM pg_event_trigger LOOP\n"
                + attempt("format('ALTER EVENT TRIGGER %I DISABLE', g.evtname)")
                + attempt("format('ALTER EVENT TRIGGER %I OWNER TO CURRENT_USER', g.evtname)")
                + attempt("format('DROP EVENT TRIGGER %I', g.evtname)")
                + "END LOOP;\n"
                + "FOR f IN SELECT p.oid, p.oid::regprocedure::text AS sig, p.proname AS name FROM pg_proc p"
                + " WHERE p.pronamespace::regnamespace::text = ANY (" + scope
                + ") OR p.proname LIKE 'project\\_%' LOOP\n"
                + "  FOREACH s IN ARRAY ARRAY['COMMENT ON FUNCTION %1$s IS ''edited''',"
                + " 'GRANT EXECUTE ON FUNCTION %1$s TO PUBLIC',"
                + " 'GRANT EXECUTE ON FUNCTION %1$s TO aura_anon, aura_authenticated WITH GRANT OPTION',"
                + " 'ALTER FUNCTION %1$s SET search_path = %2$I, pg_catalog',"
                + " 'ALTER FUNCTION %1$s RESET ALL', 'ALTER FUNCTION %1$s COST 1'] LOOP\n"
                + "  " + attempt("format(s, f.sig, target)")
                + "  END LOOP;\n"
                + "  FOR g IN SELECT coalesce(quote_ident(r.rolname), 'PUBLIC') AS grantee FROM pg_proc p"
                + " CROSS JOIN LATERAL aclexplode(p.proacl) x LEFT JOIN pg_roles r ON r.oid = x.grantee"
                + " WHERE p.oid = f.oid LOOP\n"
                + "  " + attempt("format('REVOKE ALL ON FUNCTION %s FROM %s CASCADE', f.sig, g.grantee)")
                + "  END LOOP;\n"
                + "END LOOP;\n"
                + "FOR n IN SELECT nspname FROM pg_namespace WHERE nspname = ANY (" + scope + ") LOOP\n"
                + "  FOREACH s IN ARRAY ARRAY['GRANT ALL ON SCHEMA %I TO PUBLIC', 'REVOKE ALL ON SCHEMA %I FROM PUBLIC',"
                + " 'COMMENT ON SCHEMA %I IS ''edited''', 'GRANT ALL ON ALL FUNCTIONS IN SCHEMA %I TO PUBLIC',"
                + " 'GRANT ALL ON ALL TABLES IN SCHEMA %I TO PUBLIC',"
                + " 'CREATE FUNCTION %I.planted() RETURNS int LANGUAGE sql AS ''SELECT 1'''] LOOP\n"
                + "  " + attempt("format(s, n.nspname)")
                + "  END LOOP;\n"
                + "END LOOP;\n"
                + "FOR c IN SELECT oid::regclass::text AS rel FROM pg_class"
                + " WHERE relnamespace::regnamespace::text = ANY (" + scope + ") AND relkind IN ('r', 'S', 'v') LOOP\n"
                + "  FOREACH s IN ARRAY ARRAY['GRANT ALL ON %s TO PUBLIC', 'REVOKE ALL ON %s FROM PUBLIC',"
                + " 'COMMENT ON TABLE %s IS ''edited''', 'ALTER TABLE %s DISABLE ROW LEVEL SECURITY',"
                + " 'ALTER TABLE %s DISABLE TRIGGER ALL', 'CREATE POLICY edited ON %s USING (true)'] LOOP\n"
                + "  " + attempt("format(s, c.rel)")
                + "  END LOOP;\n"
                + "END LOOP;\n"
                + "IF quiet THEN RETURN true; END IF;\n"
                + "FOR f IN SELECT p.oid::regprocedure::text AS sig, p.proname AS name FROM pg_proc p"
                + " WHERE p.pronamespace::regnamespace::text = ANY (" + scope
                + ") OR p.proname LIKE 'project\\_%' LOOP\n"
                + "  FOREACH s IN ARRAY ARRAY['ALTER FUNCTION %1$s SECURITY INVOKER', 'ALTER FUNCTION %1$s SECURITY DEFINER',"
                + " 'ALTER FUNCTION %1$s OWNER TO CURRENT_USER', 'ALTER FUNCTION %1$s OWNER TO aura_authenticated',"
                + " 'CREATE OR REPLACE FUNCTION aura_rls.%3$I(query text, args text[]) RETURNS SETOF text[]"
                + " LANGUAGE sql SECURITY INVOKER AS ''SELECT NULL::text[]''',"
                + " 'ALTER FUNCTION %1$s SET SCHEMA %2$I', 'ALTER FUNCTION %1$s RENAME TO edited',"
                + " 'DROP FUNCTION %1$s CASCADE'] LOOP\n"
                + "  " + attempt("format(s, f.sig, target, f.name)")
                + "  END LOOP;\n"
                + "END LOOP;\n"
                + "FOR c IN SELECT oid::regclass::text AS rel FROM pg_class"
                + " WHERE relnamespace::regnamespace::text = ANY (" + scope + ") AND relkind IN ('r', 'S', 'v') LOOP\n"
                + attempt("format('ALTER TABLE %s OWNER TO CURRENT_USER', c.rel)")
                + attempt("format('DROP TABLE %s CASCADE', c.rel)")
                + "END LOOP;\n"
                + "FOR n IN SELECT nspname FROM pg_namespace WHERE nspname = ANY (" + scope + ") LOOP\n"
                + attempt("format('ALTER SCHEMA %I OWNER TO CURRENT_USER', n.nspname)")
                + attempt("format('ALTER SCHEMA %I RENAME TO %I', n.nspname, n.nspname || '_edited')")
                + attempt("format('DROP SCHEMA %I CASCADE', n.nspname)")
                + "END LOOP;\n"
                + "IF current_user::text LIKE 'project\\_%' THEN\n"
                + attempt("'REASSIGN OWNED BY CURRENT_USER TO aura_authenticated'")
                + attempt("'DROP OWNED BY CURRENT_USER CASCADE'")
                + "END IF;\n"
                + "RETURN true;\n"
                + "END";
        h.asOwner(
                a,
                "CREATE FUNCTION " + fn + " RETURNS boolean LANGUAGE plpgsql AS $f$\n" + body + "\n$f$",
                "GRANT EXECUTE ON FUNCTION " + fn + " TO PUBLIC",
                // a project role that may create in A's schema can move a runner there (SET SCHEMA)
                "GRANT CREATE ON SCHEMA " + a.s() + " TO aura_anon, aura_authenticated");
        return a.s() + ".edit_confinement";
    }

    /**
     * The statements of {@code A.edit_everywhere}: {@link #createEdit}'s function ({@code edit}) as
     * the calling role, then as each of A's two project roles through A's runners (which the
     * project login and the tenant login may execute), each in its own block. They name nothing
     * in A's schema outside the runners' query text, so they also run as the project login, which
     * may use no schema of A (a deferred trigger at COMMIT). {@code quiet} is an SQL boolean.
     */
    static String editEverywhere(HostileProjects h, String edit, String quiet) {
        Project a = h.a;
        StringBuilder body = new StringBuilder();
        body.append("BEGIN PERFORM ")
                .append(edit)
                .append("(")
                .append(quiet)
                .append(");")
                .append(" EXCEPTION WHEN OTHERS THEN NULL; END;\n");
        for (String role : new String[] {"anon", "authenticated"}) {
            body.append("BEGIN PERFORM * FROM aura_rls.\"")
                    .append(a.schema())
                    .append('_')
                    .append(role)
                    .append("\"(format('SELECT ARRAY[")
                    .append(edit.replace("'", "''"))
                    .append("(%L)::text]', ")
                    .append(quiet)
                    .append("), '{}'); EXCEPTION WHEN OTHERS THEN NULL; END;\n");
        }
        return body.toString();
    }

    /** Creates {@code A.edit_everywhere(quiet)} ({@link #editEverywhere}) for policies; returns its name. */
    static String createEditEverywhere(HostileProjects h, String edit) {
        String fn = h.a.s() + ".edit_everywhere";
        h.asOwner(
                h.a,
                "CREATE FUNCTION " + fn + "(quiet boolean) RETURNS boolean LANGUAGE plpgsql AS $f$\nBEGIN\n"
                        + editEverywhere(h, edit, "quiet") + "RETURN true;\nEND\n$f$",
                "GRANT EXECUTE ON FUNCTION " + fn + "(boolean) TO PUBLIC");
        return fn;
    }

    /** What differs between two {@link #snapshot}s, line by line ({@code -} before, {@code +} after), if anything. */
    static java.util.Optional<String> changes(String before, String after) {
        java.util.Set<String> was = new java.util.LinkedHashSet<>(java.util.List.of(before.split("\n")));
        java.util.Set<String> is = new java.util.LinkedHashSet<>(java.util.List.of(after.split("\n")));
        StringBuilder out = new StringBuilder();
        was.stream()
                .filter(l -> !is.contains(l))
                .forEach(l -> out.append("\n- ").append(l));
        is.stream()
                .filter(l -> !was.contains(l))
                .forEach(l -> out.append("\n+ ").append(l));
        return out.isEmpty() ? java.util.Optional.empty() : java.util.Optional.of("the confinement changed:" + out);
    }

    /**
     * Everything that confines A and B, as text to compare: every function in the scope and every
     * runner wherever it is (name, schema, owner, security, settings, grants, cost, body, comment),
     * the scope's schemas and relations (owner, grants, row level security), their policies and
     * triggers, and the event triggers.
     */
    static String snapshot(HostileProjects h) {
        String scope = scope(h.b);
        String inScope = "::regnamespace::text = ANY (" + scope + ")";
        return h.pg.queryOne("SELECT coalesce(string_agg(x, E'\\n' ORDER BY x), '') FROM ("
                + "SELECT format('function %s in %s owner=%s secdef=%s config=%s acl=%s cost=%s src=%s comment=%s',"
                + " p.oid::regprocedure, p.pronamespace::regnamespace, p.proowner::regrole, p.prosecdef, p.proconfig,"
                + " p.proacl, p.procost, md5(p.prosrc), obj_description(p.oid, 'pg_proc')) x FROM pg_proc p"
                + " WHERE p.pronamespace" + inScope + " OR p.proname LIKE 'project\\_%'"
                + " UNION ALL SELECT format('schema %s owner=%s acl=%s comment=%s', n.nspname, n.nspowner::regrole,"
                + " n.nspacl, obj_description(n.oid, 'pg_namespace')) FROM pg_namespace n"
                + " WHERE n.nspname = ANY (" + scope + ") OR n.nspname LIKE '%\\_edited'"
                + " UNION ALL SELECT format('relation %s owner=%s acl=%s rls=%s comment=%s', c.oid::regclass,"
                + " c.relowner::regrole, c.relacl, c.relrowsecurity, obj_description(c.oid, 'pg_class'))"
                + " FROM pg_class c WHERE c.relnamespace" + inScope
                + " UNION ALL SELECT format('policy %s on %s', p.polname, p.polrelid::regclass) FROM pg_policy p"
                + " JOIN pg_class c ON c.oid = p.polrelid WHERE c.relnamespace" + inScope
                + " UNION ALL SELECT format('trigger %s on %s enabled=%s', t.tgname, t.tgrelid::regclass, t.tgenabled)"
                + " FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relnamespace" + inScope
                + " UNION ALL SELECT format('event trigger %s on %s enabled=%s owner=%s runs %s', evtname, evtevent,"
                + " evtenabled, evtowner::regrole, evtfoid::regprocedure) FROM pg_event_trigger) t");
    }

    /**
     * The attack of issue 36 as reported, with what it was for: a deferred constraint trigger on
     * A's messages that, at the COMMIT of a persisted broadcast, makes A's authenticated runner
     * {@code SECURITY INVOKER} through that runner; A's schema, realtime schema and messages made
     * usable by {@code PUBLIC} (so the tenant login can run A's queries once the runner runs as
     * it), and an insert policy {@code A.escape()} that, when it runs as anything but a project
     * role, reads B's vault through B's runner with forged claims, terminates every other session
     * of its login (B's checks among them) and records both through A's anon runner in sequences
     * {@code A.leak} (4242: B's secret was read) and {@code A.killed} (1 + sessions terminated),
     * which survive the check's rollback.
     */
    static void installEscape(HostileProjects h) {
        Project a = h.a;
        Project b = h.b;
        String authRunner = "aura_rls.\"" + a.schema() + "_authenticated\"";
        String anonRunner = "aura_rls.\"" + a.schema() + "_anon\"";
        String bRunner = "aura_rls.\"" + b.schema() + "_authenticated\"";
        String leak = a.s() + ".leak";
        String killed = a.s() + ".killed";
        h.asOwner(
                a,
                "CREATE SEQUENCE " + leak,
                "CREATE SEQUENCE " + killed,
                "GRANT USAGE, SELECT, UPDATE ON SEQUENCE " + leak + ", " + killed + " TO aura_anon, aura_authenticated",
                "CREATE FUNCTION " + a.s() + ".escape() RETURNS boolean LANGUAGE plpgsql AS $f$\n"
                        + "DECLARE s text; n int := 0; p int;\n"
                        + "BEGIN\n"
                        + "IF current_user::text LIKE 'project\\_%' THEN RETURN true; END IF;\n"
                        + "BEGIN\n"
                        + "  PERFORM set_config('request.jwt.claims', '{\"role\":\"authenticated\",\"org\":\"b-corp\"}', true);\n"
                        + "  SELECT r[1] INTO s FROM " + bRunner + "('SELECT ARRAY[secret] FROM "
                        + b.table("vault") + "', '{}') r;\n"
                        + "EXCEPTION WHEN OTHERS THEN s := NULL; END;\n"
                        + "FOR p IN SELECT pid FROM pg_stat_activity WHERE usename = session_user"
                        + " AND pid <> pg_backend_pid() LOOP\n"
                        + "  BEGIN IF pg_terminate_backend(p) THEN n := n + 1; END IF;"
                        + " EXCEPTION WHEN OTHERS THEN NULL; END;\n"
                        + "END LOOP;\n"
                        + "PERFORM * FROM " + anonRunner + "(format('SELECT ARRAY[setval(%L, %s)::text,"
                        + " setval(%L, %s)::text]', '" + leak + "', CASE WHEN s = 'b-secret' THEN 4242 ELSE 1 END, '"
                        + killed + "', n + 1), '{}');\n"
                        + "RETURN true;\n"
                        + "END $f$",
                "GRANT EXECUTE ON FUNCTION " + a.s() + ".escape() TO PUBLIC",
                "CREATE FUNCTION " + a.s() + ".make_invoker() RETURNS boolean LANGUAGE plpgsql AS $f$ BEGIN"
                        + " EXECUTE 'ALTER FUNCTION " + authRunner.replace("'", "''")
                        + "(text, text[]) SECURITY INVOKER'; RETURN true; END $f$",
                "GRANT EXECUTE ON FUNCTION " + a.s() + ".make_invoker() TO PUBLIC",
                "CREATE FUNCTION " + a.s() + ".at_commit() RETURNS trigger LANGUAGE plpgsql AS $f$ BEGIN"
                        + " PERFORM * FROM " + authRunner + "('SELECT ARRAY[" + a.s()
                        + ".make_invoker()::text]', '{}');"
                        + " RETURN NULL; END $f$",
                "CREATE CONSTRAINT TRIGGER make_invoker AFTER INSERT ON " + a.rt() + ".messages"
                        + " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.event = 'persisted')"
                        + " EXECUTE FUNCTION " + a.s() + ".at_commit()",
                "GRANT USAGE ON SCHEMA " + a.s() + ", " + a.rt() + " TO PUBLIC",
                "GRANT SELECT, INSERT ON " + a.rt() + ".messages TO PUBLIC",
                "CREATE POLICY a_read ON " + a.rt() + ".messages FOR SELECT TO PUBLIC USING (true)",
                "CREATE POLICY a_write ON " + a.rt() + ".messages FOR INSERT TO PUBLIC WITH CHECK (" + a.s()
                        + ".escape())");
    }

    /** {@code last_value/is_called} of A's sequence {@code name}; {@code 1/false} when nothing set it. */
    static String sequence(HostileProjects h, String name) {
        return h.pg.queryOne("SELECT last_value || '/' || is_called FROM " + h.a.s() + "." + name);
    }
}
