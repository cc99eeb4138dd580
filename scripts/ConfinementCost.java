import dev.aura.realtime.cdc.identity.ConfinementGuard;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The cost of the confinement guard (docs/security.md, "The confinement cannot be edited"), run by
 * scripts/confinement-cost.sh on a throwaway cluster: a database with PROJECTS projects' runners in
 * aura_rls, then, REPS times each, alternating in blocks so both arms see the same machine load:
 *
 * <ol>
 *   <li>a tenant's DDL transaction (CREATE TABLE, COMMENT, GRANT, DROP TABLE in its own schema) as
 *       the schema's owner, with the event triggers enabled and disabled;
 *   <li>the same as the platform (a superuser: the guard returns at once);
 *   <li>a persist as the project login: one runner call inserting a message, the check before
 *       COMMIT, COMMIT; with the check of the build before the fix (runners only) and with this
 *       build's (guard in place and runners).
 * </ol>
 *
 * Prints the median and mean time per transaction of each arm in microseconds.
 */
public final class ConfinementCost {
    private static final int PROJECTS = 1_000;
    private static final int BLOCK = 50;

    public static void main(String[] args) throws Exception {
        String url = args[0];
        int reps = Integer.parseInt(args[1]);
        ConfinementGuard guard = ConfinementGuard.load();
        String schema;
        try (Connection su = DriverManager.getConnection(url + "?user=postgres");
                Statement s = su.createStatement()) {
            s.execute(SETUP.replace("PROJECTS", Integer.toString(PROJECTS)));
            su.setAutoCommit(false);
            s.execute(guard.sql());
            su.commit();
            su.setAutoCommit(true);
            try (var rs = s.executeQuery("SELECT schema FROM bench_project")) {
                rs.next();
                schema = rs.getString(1);
            }
        }
        String role = schema + "_authenticated";
        String ddl = "CREATE TABLE \"" + schema + "\".bench_t(x int);COMMENT ON TABLE \"" + schema
                + "\".bench_t IS 'x';GRANT SELECT ON \"" + schema + "\".bench_t TO aura_anon;DROP TABLE \"" + schema
                + "\".bench_t";
        String persist = "SELECT * FROM aura_rls.\"" + role + "\"('WITH w AS (INSERT INTO \"" + schema
                + "\".messages(topic, payload) VALUES ($1[1], ''{}'')) SELECT ARRAY[''ok'']', ARRAY['t'])";
        String runners = "SELECT pg_catalog.count(*) OPERATOR(pg_catalog.=) 2 AND COALESCE(pg_catalog.bool_and("
                + "p.prosecdef AND p.proowner OPERATOR(pg_catalog.=) r.oid), false) FROM pg_catalog.pg_proc p"
                + " JOIN pg_catalog.pg_roles r ON r.rolname OPERATOR(pg_catalog.=) p.proname WHERE p.pronamespace"
                + " OPERATOR(pg_catalog.=) 'aura_rls'::pg_catalog.regnamespace AND p.proname OPERATOR(pg_catalog.=)"
                + " ANY (?::pg_catalog.name[])";
        String before = "SELECT count(*) = 2 AND coalesce(bool_and(p.prosecdef AND p.proowner = r.oid), false)"
                + " FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_roles r ON r.rolname = p.proname"
                + " WHERE p.pronamespace = 'aura_rls'::regnamespace AND p.proname = ANY (?)";
        String after = "SELECT (" + ConfinementGuard.IN_PLACE + "), (" + runners + ")";
        String[] names = {schema + "_anon", role};

        try (Connection su = DriverManager.getConnection(url + "?user=postgres");
                Connection owner = DriverManager.getConnection(url + "?user=tenant_owner");
                Connection login = DriverManager.getConnection(url + "?user=" + schema + "_login")) {
            List<Long> ownerOn = new ArrayList<>(), ownerOff = new ArrayList<>();
            List<Long> suOn = new ArrayList<>(), suOff = new ArrayList<>();
            List<Long> persistBefore = new ArrayList<>(), persistAfter = new ArrayList<>();
            for (int done = 0; done < reps; done += BLOCK) {
                for (boolean on : new boolean[] {true, false}) {
                    guard(su, on);
                    for (int i = 0; i < BLOCK; i++) {
                        (on ? ownerOn : ownerOff).add(ddl(owner, ddl));
                        (on ? suOn : suOff).add(ddl(su, ddl));
                    }
                }
                guard(su, true);
                for (int i = 0; i < BLOCK; i++) {
                    persistBefore.add(persist(login, persist, before, null, names));
                    persistAfter.add(persist(login, persist, after, guard.body(), names));
                }
            }
            print("tenant DDL transaction (4 commands), guard on", ownerOn);
            print("tenant DDL transaction (4 commands), guard off", ownerOff);
            print("platform DDL transaction (4 commands), guard on", suOn);
            print("platform DDL transaction (4 commands), guard off", suOff);
            print("persist, check before the fix (runners)", persistBefore);
            print("persist, this check (guard and runners)", persistAfter);
        }
    }

    private static void guard(Connection su, boolean on) throws SQLException {
        try (Statement s = su.createStatement()) {
            for (String t : new String[] {ConfinementGuard.DDL_TRIGGER, ConfinementGuard.DROP_TRIGGER}) {
                s.execute("ALTER EVENT TRIGGER " + t + (on ? " ENABLE ALWAYS" : " DISABLE"));
            }
        }
    }

    private static long ddl(Connection c, String sql) throws SQLException {
        long t0 = System.nanoTime();
        c.setAutoCommit(false);
        try (Statement s = c.createStatement()) {
            for (String each : sql.split(";")) {
                s.execute(each);
            }
        }
        c.commit();
        c.setAutoCommit(true);
        return System.nanoTime() - t0;
    }

    private static long persist(Connection c, String insert, String check, String body, String[] names)
            throws SQLException {
        long t0 = System.nanoTime();
        c.setAutoCommit(false);
        try (Statement s = c.createStatement()) {
            s.executeQuery(insert).close();
        }
        try (PreparedStatement ps = c.prepareStatement(check)) {
            int i = 1;
            if (body != null) {
                ps.setString(i++, body);
            }
            ps.setArray(i, c.createArrayOf("text", names));
            try (var rs = ps.executeQuery()) {
                rs.next();
                if (!rs.getBoolean(1)) {
                    throw new IllegalStateException("the check failed: " + check);
                }
            }
        }
        c.commit();
        c.setAutoCommit(true);
        return System.nanoTime() - t0;
    }

    private static void print(String what, List<Long> nanos) {
        long[] sorted = nanos.stream().mapToLong(Long::longValue).sorted().toArray();
        double mean = Arrays.stream(sorted).average().orElse(0) / 1000.0;
        System.out.printf("%-52s n=%d median=%.0f us mean=%.0f us%n", what, sorted.length, sorted[sorted.length / 2] / 1000.0, mean);
    }

    private static final String SETUP = """
            CREATE SCHEMA aura_platform;
            CREATE SCHEMA aura_rls;
            CREATE SCHEMA auth;
            GRANT USAGE ON SCHEMA aura_rls TO PUBLIC;
            CREATE ROLE aura_anon NOLOGIN;
            CREATE ROLE aura_authenticated NOLOGIN;
            CREATE ROLE tenant_owner LOGIN;
            DO $$
            DECLARE i int; id text; r text;
            BEGIN
              FOR i IN 1..PROJECTS LOOP
                id := 'project_' || replace(gen_random_uuid()::text, '-', '_');
                EXECUTE format('CREATE SCHEMA %I', id);
                FOREACH r IN ARRAY ARRAY['anon', 'authenticated'] LOOP
                  EXECUTE format('CREATE ROLE %I NOLOGIN INHERIT IN ROLE %I', id || '_' || r, 'aura_' || r);
                  EXECUTE format('CREATE FUNCTION aura_rls.%I(query text, args text[]) RETURNS SETOF text[]'
                    ' LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, %I, pg_temp AS'
                    ' $f$ BEGIN IF CURRENT_USER OPERATOR(pg_catalog.<>) %L::pg_catalog.name THEN RAISE EXCEPTION'
                    ' ''ConfinementBroken''; END IF; RETURN QUERY EXECUTE query USING args; END $f$',
                    id || '_' || r, id, id || '_' || r);
                  EXECUTE format('ALTER FUNCTION aura_rls.%I(text, text[]) OWNER TO %I', id || '_' || r, id || '_' || r);
                  EXECUTE format('REVOKE ALL ON FUNCTION aura_rls.%I(text, text[]) FROM PUBLIC', id || '_' || r);
                  EXECUTE format('GRANT USAGE ON SCHEMA %I TO %I', id, id || '_' || r);
                END LOOP;
                EXECUTE format('CREATE ROLE %I LOGIN NOINHERIT', id || '_login');
                EXECUTE format('GRANT EXECUTE ON FUNCTION aura_rls.%I(text, text[]) TO %I',
                  id || '_authenticated', id || '_login');
              END LOOP;
            END $$;
            CREATE TABLE bench_project AS SELECT nspname::text AS schema FROM pg_namespace
              WHERE nspname LIKE 'project\\_%' ORDER BY nspname LIMIT 1;
            DO $$
            DECLARE p text := (SELECT schema FROM bench_project);
            BEGIN
              EXECUTE format('ALTER SCHEMA %I OWNER TO tenant_owner', p);
              EXECUTE format('CREATE TABLE %I.messages(id uuid PRIMARY KEY DEFAULT gen_random_uuid(), topic text,'
                ' payload jsonb, inserted_at timestamptz DEFAULT now())', p);
              EXECUTE format('ALTER TABLE %I.messages OWNER TO tenant_owner', p);
              EXECUTE format('GRANT SELECT, INSERT ON %I.messages TO %I', p, p || '_authenticated');
            END $$;
            """;
}
