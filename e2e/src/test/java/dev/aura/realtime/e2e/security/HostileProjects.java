package dev.aura.realtime.e2e.security;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.e2e.E2eStack;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.RealtimeJsClient;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/**
 * Two projects on one cluster of their own (passwords required, so a changed password locks a
 * login out): A is hostile, B the victim. Each schema is owned by its own NOSUPERUSER NOLOGIN role
 * ({@code owner_a}, {@code owner_b}) and its tenant DDL runs as that owner, granted to the client
 * roles as a migrated Supabase project is. B has a table with row level security ({@code feed}),
 * a private channel family {@code b-room:*} with read and write policies, and a {@code vault};
 * its realtime-js subscriber and writer are the victim's eyes. {@link #harms} says what the victim
 * lost after an attack.
 */
final class HostileProjects implements AutoCloseable {
    static final Duration T = Duration.ofSeconds(20);

    private static final ObjectMapper JSON = new ObjectMapper();

    record Project(String id, String owner) {
        String schema() {
            return E2eStack.schemaOf(id);
        }

        /** The quoted project schema. */
        String s() {
            return "\"" + schema() + "\"";
        }

        /** The quoted realtime schema. */
        String rt() {
            return "\"" + schema() + "_realtime\"";
        }

        /** The prefix of the project's own roles under per-project identity. */
        String rolePrefix() {
            return schema();
        }

        String table(String name) {
            return s() + ".\"" + name + "\"";
        }
    }

    final PostgresServer pg;
    final E2eStack stack;
    final Project a = new Project(UUID.randomUUID().toString(), "owner_a");
    final Project b = new Project(UUID.randomUUID().toString(), "owner_b");
    private final List<RealtimeJsClient> clients = new ArrayList<>();
    private RealtimeJsClient bReader;
    private RealtimeJsClient bWriter;
    private int feedRows;
    private int broadcasts;
    private int joins;

    private HostileProjects(PostgresServer pg, E2eStack stack) {
        this.pg = pg;
        this.stack = stack;
    }

    /** A fresh password-checking cluster, a stack with a 2 s janitor, projects A and B, and B's victim clients warmed up. */
    static HostileProjects start() {
        return start(Map.of());
    }

    /** {@link #start()} with {@code cdcOverrides} added to the cdc-worker's environment. */
    static HostileProjects start(Map<String, String> cdcOverrides) {
        PostgresServer pg = PostgresServer.builder().requirePasswords().start();
        HostileProjects h;
        try {
            Map<String, String> env = new java.util.HashMap<>(Map.of("CDC_MESSAGES_JANITOR_MS", "2000"));
            env.putAll(cdcOverrides);
            h = new HostileProjects(pg, E2eStack.start(pg, NatsServer.shared(), 1, env));
        } catch (RuntimeException | Error e) {
            pg.close();
            throw e;
        }
        try {
            h.createProject(h.a);
            h.createProject(h.b);
            h.victim();
            return h;
        } catch (RuntimeException | Error e) {
            h.close();
            throw e;
        }
    }

    private void createProject(Project p) {
        pg.execute(
                "CREATE ROLE " + p.owner() + " NOLOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB",
                "CREATE SCHEMA " + p.s() + " AUTHORIZATION " + p.owner(),
                "GRANT USAGE ON SCHEMA auth TO " + p.owner(),
                "INSERT INTO aura_platform.projects(project_id, schema_name) VALUES ('" + p.id() + "', '" + p.schema()
                        + "')");
        asOwner(p, "GRANT USAGE ON SCHEMA " + p.s() + " TO aura_anon, aura_authenticated");
        Awaitility.await("realtime schema of " + p.id())
                .atMost(T)
                .until(() -> pg.queryOne("SELECT count(*) FROM aura_platform.projects WHERE project_id = '" + p.id()
                                + "' AND realtime_schema_version >= 1")
                        .equals("1"));
    }

    /** Runs {@code sql} on one connection after {@code SET ROLE <owner>}: the tenant's own DDL. */
    void asOwner(Project p, String... sql) {
        try (Connection c = pg.connect();
                Statement s = c.createStatement()) {
            s.execute("SET ROLE " + p.owner());
            for (String each : sql) {
                try {
                    s.execute(each);
                } catch (SQLException e) {
                    throw new IllegalStateException("as " + p.owner() + ": " + each + ": " + e.getMessage(), e);
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Creates {@code name} as the owner, granted to the client roles, optionally with RLS and a policy, enabled for realtime. */
    void table(Project p, String name, String columns, String selectPolicy) {
        String t = p.table(name);
        asOwner(p, "CREATE TABLE " + t + columns, "GRANT SELECT ON " + t + " TO aura_anon, aura_authenticated");
        if (selectPolicy != null) {
            asOwner(
                    p,
                    "ALTER TABLE " + t + " ENABLE ROW LEVEL SECURITY",
                    "CREATE POLICY p_" + name + " ON " + t + " FOR SELECT USING (" + selectPolicy + ")");
        }
        stack.enable(p.id(), name);
    }

    /** A signed-in user of {@code p} whose claims carry {@code org}. */
    String user(Project p, String org) {
        Map<String, Object> claims = stack.tokens.claims("authenticated", p.id());
        claims.put("sub", UUID.randomUUID().toString());
        claims.put("org", org);
        return stack.tokens.withClaims(claims);
    }

    RealtimeJsClient client(Project p, String org) {
        RealtimeJsClient js = RealtimeJsClient.start();
        clients.add(js);
        js.connect(stack.wsUrl(0), stack.tokens.anon(p.id()), "2.0.0", Map.of("accessToken", user(p, org)));
        return js;
    }

    static void subscribeChanges(RealtimeJsClient js, String channel, String table) {
        js.channel(channel);
        js.onPostgresChanges(channel, Map.of("event", "*", "schema", "public", "table", table));
        js.subscribeAndAwait(channel, T);
    }

    /** Ids of the INSERTs {@code js} received on {@code channel}. */
    static Set<Integer> inserted(RealtimeJsClient js, String channel) {
        return js.events().stream()
                .filter(e -> "postgres_changes".equals(e.path("type").asText())
                        && channel.equals(e.path("channel").asText())
                        && "INSERT".equals(e.path("payload").path("eventType").asText()))
                .map(e -> e.path("payload").path("new").path("id").asInt())
                .collect(Collectors.toSet());
    }

    static boolean broadcastOf(JsonNode e, String channel, String event) {
        return "broadcast".equals(e.path("type").asText())
                && channel.equals(e.path("channel").asText())
                && event.equals(e.path("payload").path("event").asText());
    }

    /** Joins {@code channel} (private, {@code config} added) and returns the status it reported, or "none". */
    static String join(RealtimeJsClient js, String channel, Map<String, ?> config) {
        try {
            java.util.HashMap<String, Object> c = new java.util.HashMap<>(config);
            c.put("private", true);
            js.channel(channel, c);
            js.onBroadcast(channel, "*");
            int mark = js.eventCount();
            js.subscribe(channel);
            return js.awaitEvent(
                            mark,
                            e -> "status".equals(e.path("type").asText())
                                    && channel.equals(e.path("channel").asText()),
                            T)
                    .path("status")
                    .asText();
        } catch (RuntimeException | AssertionError e) {
            return "none (" + e.getMessage() + ")";
        }
    }

    /** Runs one of the hostile project's actions; its outcome is A's business, not the victim's. */
    static void attempt(Runnable action) {
        try {
            action.run();
        } catch (RuntimeException | AssertionError ignored) {
            // A may well be refused or time out: only what the victim sees is asserted
        }
    }

    private void victim() {
        table(b, "feed", "(id int PRIMARY KEY, body text)", "true");
        table(b, "vault", "(id int PRIMARY KEY, secret text)", "auth.jwt() ->> 'org' = 'b-corp'");
        asOwner(
                b,
                "INSERT INTO " + b.table("vault") + " VALUES (1, 'b-secret')",
                "CREATE POLICY b_read ON " + b.rt() + ".messages FOR SELECT TO aura_authenticated USING (" + b.rt()
                        + ".topic() LIKE 'b-room:%' AND auth.jwt() ->> 'org' = 'b-corp')",
                "CREATE POLICY b_write ON " + b.rt() + ".messages FOR INSERT TO aura_authenticated WITH CHECK ("
                        + b.rt() + ".topic() LIKE 'b-room:%' AND auth.jwt() ->> 'org' = 'b-corp')");
        bReader = client(b, "b-corp");
        subscribeChanges(bReader, "b-feed", "feed");
        bReader.channel("b-room:0", Map.of("private", true));
        bReader.onBroadcast("b-room:0", "*");
        bReader.subscribeAndAwait("b-room:0", T);
        bWriter = client(b, "b-corp");
        bWriter.channel("b-room:0", Map.of("private", true));
        List<String> warmUp = new ArrayList<>();
        victimDelivers(warmUp);
        if (!warmUp.isEmpty()) {
            throw new IllegalStateException("the victim does not work before any attack: " + warmUp);
        }
    }

    /** B's row, B's private broadcast and a new private join of B, each awaited; what did not arrive is added to {@code harms}. */
    void victimDelivers(List<String> harms) {
        int row = ++feedRows;
        pg.execute("INSERT INTO " + b.table("feed") + " VALUES (" + row + ", 'victim row')");
        awaitOrHarm(
                harms,
                () -> "B's subscriber received rows " + inserted(bReader, "b-feed") + " of 1.." + row,
                () -> inserted(bReader, "b-feed").size() == row);
        int n = ++broadcasts;
        String sent;
        try {
            sent = bWriter.httpSend("b-room:0", "n" + n, Map.of("n", n)).toString();
        } catch (RuntimeException e) {
            sent = e.toString();
        }
        String result = sent;
        awaitOrHarm(
                harms,
                () -> "B's private broadcast n" + n + " did not arrive (httpSend: " + result + ")",
                () -> bReader.events().stream().anyMatch(e -> broadcastOf(e, "b-room:0", "n" + n)));
        String status = join(bReader, "b-room:" + (++joins), Map.of());
        if (!"SUBSCRIBED".equals(status)) {
            harms.add("B's new private join b-room:" + joins + " got " + status);
        }
    }

    static void awaitOrHarm(List<String> harms, Supplier<String> harm, Callable<Boolean> condition) {
        try {
            Awaitility.await().atMost(T).pollInterval(Duration.ofMillis(100)).until(condition);
        } catch (ConditionTimeoutException e) {
            harms.add(harm.get());
        }
    }

    // ---- what "no login changed" means ---------------------------------------------------------

    private String isA(String col) {
        return "(" + col + " = '" + a.owner() + "' OR starts_with(" + col + ", '" + a.rolePrefix() + "'))";
    }

    /** A role of a project other than A and B (the stack's own unused project): not the victim's, left out. */
    private String isThird(String col) {
        return "(starts_with(" + col + ", 'project_') AND NOT " + isA(col) + " AND NOT starts_with(" + col + ", '"
                + b.rolePrefix() + "'))";
    }

    /**
     * Every role's attributes and password, every membership and every per-role setting, except
     * what belongs to project A (its roles may change as A pleases) and to third projects; A's roles
     * becoming plain members of the client roles is per-project identity's design and left out too.
     */
    String logins() {
        return pg.queryOne("SELECT coalesce(string_agg(x, E'\\n' ORDER BY x), '') FROM ("
                + "SELECT format('role %s pw=%s super=%s inherit=%s createrole=%s createdb=%s login=%s repl=%s"
                + " bypassrls=%s connlimit=%s until=%s', rolname, rolpassword, rolsuper, rolinherit, rolcreaterole,"
                + " rolcreatedb, rolcanlogin, rolreplication, rolbypassrls, rolconnlimit, rolvaliduntil) x"
                + " FROM pg_authid WHERE NOT " + isA("rolname") + " AND NOT " + isThird("rolname")
                + " UNION ALL SELECT format('member %s of %s admin=%s by %s', m.rolname, r.rolname, am.admin_option,"
                + " g.rolname) FROM pg_auth_members am JOIN pg_authid r ON r.oid = am.roleid"
                + " JOIN pg_authid m ON m.oid = am.member LEFT JOIN pg_authid g ON g.oid = am.grantor"
                + " WHERE NOT " + isA("r.rolname") + " AND NOT " + isThird("r.rolname") + " AND NOT "
                + isThird("m.rolname") + " AND NOT (" + isA("m.rolname")
                + " AND r.rolname IN ('aura_anon', 'aura_authenticated') AND NOT am.admin_option)"
                + " UNION ALL SELECT format('setting of %s: %s', coalesce(r.rolname, '*'), s.setconfig)"
                + " FROM pg_db_role_setting s LEFT JOIN pg_authid r ON r.oid = s.setrole"
                + " WHERE r.rolname IS NULL OR (NOT " + isA("r.rolname") + " AND NOT " + isThird("r.rolname")
                + ")) t");
    }

    /** Advisory locks granted to backends other than the superuser's and project A's own logins. */
    String advisoryLocksHeld() {
        return pg.queryOne("SELECT coalesce(string_agg(a.usename || ' pid ' || l.pid || ' key ' || l.classid || '/'"
                + " || l.objid, ', '), '') FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
                + " WHERE l.locktype = 'advisory' AND l.granted AND a.usename <> 'postgres' AND NOT "
                + isA("a.usename"));
    }

    /** The pool's next new connections, as a pool recycle or a replica start opens them: every non-superuser session ends. */
    void forceNewTenantConnections() {
        pg.queryOne(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE backend_type = 'client backend'"
                        + " AND usename <> 'postgres' AND pid <> pg_backend_pid()");
    }

    /**
     * What the victim lost after an attack, empty if nothing: logins, memberships and role
     * settings as in {@code loginsBefore}; no advisory lock left held; B's rows, private broadcasts
     * and private joins still work on new tenant connections; {@code /health} has RLS checks on.
     */
    List<String> harms(String loginsBefore) {
        List<String> harms = new ArrayList<>();
        String after = logins();
        if (!after.equals(loginsBefore)) {
            harms.add("logins changed:\n--- before\n" + loginsBefore + "\n--- after\n" + after);
        }
        awaitOrHarm(
                harms,
                () -> "advisory locks left held: " + advisoryLocksHeld(),
                () -> advisoryLocksHeld().isEmpty());
        forceNewTenantConnections();
        victimDelivers(harms);
        awaitOrHarm(harms, () -> "cdc-worker /health: " + stack.cdcHttp().health(), this::rlsChecksOk);
        return harms;
    }

    private boolean rlsChecksOk() {
        try {
            JsonNode t = JSON.readTree(stack.cdcHttp().health()).path("tenant_sql");
            return t.path("rls_checks").asBoolean() && t.path("reason_code").isNull();
        } catch (Exception e) {
            return false;
        }
    }

    /** {@link HostileCode#create}: A's function that tries every login takeover it can. */
    String createHostile() {
        return HostileCode.create(this);
    }

    @Override
    public void close() {
        for (RealtimeJsClient js : clients) {
            js.close();
        }
        try {
            stack.close();
        } finally {
            pg.close();
        }
    }
}
