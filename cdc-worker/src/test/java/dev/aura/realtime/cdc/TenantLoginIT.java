package dev.aura.realtime.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.cdc.config.CdcConfig;
import dev.aura.realtime.common.config.Env;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * The tenant login (docs/security.md): provisioned with no privilege beyond the client roles,
 * shared by the replicas of one release without locking each other out, refused when privileged,
 * and an outage (not a denial) when it cannot connect.
 */
class TenantLoginIT {
    private static String login(CdcFixture fx) {
        return fx.slot + "_tenant";
    }

    /** A table with RLS (policy {@code true}) the client roles may read, enabled for realtime. */
    private static String rlsTable(CdcFixture fx, String name) {
        String t = fx.table(name);
        fx.sql(
                "CREATE TABLE " + t + "(id bigserial PRIMARY KEY, body text)",
                "ALTER TABLE " + t + " REPLICA IDENTITY FULL",
                "GRANT SELECT ON " + t + " TO aura_anon, aura_authenticated",
                "ALTER TABLE " + t + " ENABLE ROW LEVEL SECURITY",
                "CREATE POLICY everyone ON " + t + " FOR SELECT USING (true)");
        fx.enable(name);
        return t;
    }

    private static List<String> allowed(CdcFixture.Received r) {
        List<String> ids = new ArrayList<>();
        r.body().get("allowed_sub_ids").forEach(n -> ids.add(n.asText()));
        return ids;
    }

    @Test
    void theProvisionedLoginHasNoPrivilegeBeyondTheClientRolesEvenAfterTampering() throws Exception {
        try (CdcFixture fx = new CdcFixture(PostgresServer.shared(), NatsServer.shared())) {
            fx.startWorker(Map.of());
            String login = login(fx);
            JsonNode tenantSql = fx.health().get("tenant_sql");
            assertThat(tenantSql.get("rls_checks").asBoolean())
                    .as(tenantSql.toString())
                    .isTrue();
            assertThat(tenantSql.get("login").asText()).isEqualTo(login);
            String attributes = "SELECT rolsuper::text || rolbypassrls || rolcreaterole || rolreplication || rolinherit"
                    + " || rolcanlogin FROM pg_roles WHERE rolname = '" + login + "'";
            String memberships = "SELECT string_agg(r.rolname, ',' ORDER BY r.rolname) FROM pg_auth_members m"
                    + " JOIN pg_roles r ON r.oid = m.roleid WHERE m.member = '" + login + "'::regrole";
            assertThat(fx.queryOne(attributes)).isEqualTo("falsefalsefalsefalsefalsetrue");
            assertThat(fx.queryOne(memberships))
                    .as("memberships of the tenant login")
                    .isNull();

            // Someone widens the login; the next start narrows it again.
            fx.sql("ALTER ROLE \"" + login + "\" BYPASSRLS CREATEROLE", "GRANT pg_read_all_data TO \"" + login + "\"");
            fx.stopWorker();
            fx.startWorker(Map.of());
            assertThat(fx.queryOne(attributes)).isEqualTo("falsefalsefalsefalsefalsetrue");
            assertThat(fx.queryOne(memberships))
                    .as("memberships of the tenant login")
                    .isNull();
            assertThat(fx.health().get("tenant_sql").get("rls_checks").asBoolean())
                    .isTrue();
        }
    }

    @Test
    void anOperatorMadeTenantLoginWithNoMembershipRunsTheChecksThroughTheProjectsRunners() throws Exception {
        String login =
                "op_tenant_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        PostgresServer.shared().execute("CREATE ROLE " + login + " LOGIN NOINHERIT PASSWORD 'op-secret-42'");
        try (CdcFixture fx = new CdcFixture(PostgresServer.shared(), NatsServer.shared())) {
            // security.md, "Managed Postgres": the operator creates the login, grants it nothing
            fx.startWorker(Map.of("POSTGRES_TENANT_URL", fx.pg.jdbcUrl(login, "op-secret-42")));
            fx.createProject();
            JsonNode tenantSql = fx.health().get("tenant_sql");
            assertThat(tenantSql.get("rls_checks").asBoolean())
                    .as(tenantSql.toString())
                    .isTrue();
            assertThat(tenantSql.get("login").asText()).isEqualTo(login);
            rlsTable(fx, "guarded");
            String anon = fx.subscribeAs(fx.projectId, "guarded", "*", null, "anon", null);
            fx.awaitCaptured("guarded");
            fx.sql("INSERT INTO " + fx.table("guarded") + "(body) VALUES ('x')");
            List<CdcFixture.Received> got = fx.await(r -> !r.isEmpty(), Duration.ofSeconds(15));
            assertThat(allowed(got.get(0))).containsExactly(anon);
            assertThat(fx.queryOne("SELECT has_function_privilege('" + login + "', 'aura_rls.\"project_"
                            + fx.projectId.replace('-', '_') + "_anon\"(text, text[])', 'EXECUTE')::text"))
                    .isEqualTo("true");
        }
    }

    @Test
    void aPrivilegedTenantLoginTurnsRlsChecksOffAndHealthSaysWhy() throws Exception {
        try (CdcFixture fx = new CdcFixture(PostgresServer.shared(), NatsServer.shared())) {
            // the operator points the tenant login at the superuser
            fx.startWorker(Map.of("POSTGRES_TENANT_URL", fx.pg.jdbcUrl()));
            fx.createProject();
            JsonNode tenantSql = fx.health().get("tenant_sql");
            assertThat(tenantSql.get("rls_checks").asBoolean()).isFalse();
            assertThat(tenantSql.get("reason_code").asText()).isEqualTo("tenant_login_privileged");
            assertThat(tenantSql.get("reason").asText()).contains("postgres").contains("SUPERUSER");
            assertThat(fx.health().get("cdc_active").asBoolean()).isTrue();

            rlsTable(fx, "guarded");
            String open = fx.table("open");
            fx.sql("CREATE TABLE " + open + "(id int PRIMARY KEY)", "GRANT SELECT ON " + open + " TO aura_anon");
            fx.enable("open");
            String anonGuarded = fx.subscribeAs(fx.projectId, "guarded", "*", null, "anon", null);
            String service = fx.subscribe("guarded", "*", null);
            String anonOpen = fx.subscribeAs(fx.projectId, "open", "*", null, "anon", null);
            fx.awaitCaptured("guarded", "open");
            fx.sql("INSERT INTO " + fx.table("guarded") + "(body) VALUES ('x')", "INSERT INTO " + open + " VALUES (1)");
            List<CdcFixture.Received> got = fx.await(r -> r.size() >= 2, Duration.ofSeconds(15));
            // no check ran on the privileged login: the RLS table reaches service_role only
            assertThat(allowed(got.get(0))).containsExactly(service).doesNotContain(anonGuarded);
            assertThat(allowed(got.get(1))).containsExactly(anonOpen);
        }
    }

    @Test
    void whenTheTenantLoginCannotConnectNothingIsLostAndTheSlotWaits() throws Exception {
        try (CdcFixture fx = new CdcFixture(PostgresServer.shared(), NatsServer.shared())) {
            fx.startWorker(Map.of());
            fx.createProject();
            String t = rlsTable(fx, "outage");
            String anon = fx.subscribeAs(fx.projectId, "outage", "*", null, "anon", null);
            fx.awaitCaptured("outage");
            String login = login(fx);
            fx.sql(
                    "ALTER ROLE \"" + login + "\" CONNECTION LIMIT 0",
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '" + login + "'");
            fx.sql("INSERT INTO " + t + "(body) VALUES ('during the outage')");
            String after = fx.queryOne("SELECT pg_current_wal_lsn()::text");
            // The check cannot run: the batch fails and is re-read; the slot never passes the change.
            Awaitility.await()
                    .during(Duration.ofSeconds(4))
                    .atMost(Duration.ofSeconds(6))
                    .until(() -> {
                        String confirmed = fx.slotColumn("confirmed_flush_lsn");
                        return fx.received.isEmpty()
                                && "true"
                                        .equals(fx.queryOne("SELECT ('" + confirmed + "'::pg_lsn < '" + after
                                                + "'::pg_lsn)::text"));
                    });

            fx.sql("ALTER ROLE \"" + login + "\" CONNECTION LIMIT -1");
            CdcFixture.Received r =
                    fx.await(l -> !l.isEmpty(), Duration.ofSeconds(30)).get(0);
            assertThat(allowed(r)).containsExactly(anon);
            assertThat(r.data().get("record").get("body").asText()).isEqualTo("during the outage");
        }
    }

    @Test
    void replicasOfOneReleaseShareTheLoginWithoutLockingEachOtherOut() throws Exception {
        try (PostgresServer pg = PostgresServer.builder().requirePasswords().start();
                CdcFixture first = new CdcFixture(pg, NatsServer.shared())) {
            first.startWorker(Map.of());
            first.createProject();
            String t = rlsTable(first, "shared");
            String anon = first.subscribeAs(first.projectId, "shared", "*", null, "anon", null);
            first.awaitCaptured("shared");

            // a second replica of the same release (same slot, same secret) starts and provisions again
            try (CdcWorker second = new CdcWorker(CdcConfig.fromEnv(new Env(first.env())), Clock.systemUTC())) {
                second.start();
                Awaitility.await()
                        .atMost(Duration.ofSeconds(30))
                        .until(() -> second.verifyTenantSql().usable());
                // every pool must open new connections, with the password both replicas derived
                first.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '" + login(first)
                        + "'");
                Awaitility.await()
                        .atMost(Duration.ofSeconds(10))
                        .until(() -> first.worker().verifyTenantSql().usable()
                                && second.verifyTenantSql().usable());
                first.sql("INSERT INTO " + t + "(body) VALUES ('after the second start')");
                CdcFixture.Received r =
                        first.await(l -> !l.isEmpty(), Duration.ofSeconds(20)).get(0);
                assertThat(allowed(r)).contains(anon);
            }
        }
    }
}
