package dev.aura.realtime.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.cdc.provision.RealtimeSchemas;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Row Level Security fan-out (docs/design.md C7): a change reaches exactly the subscribers whose
 * claims let them read the row; one subscriber whose check raises is denied alone.
 */
class RlsIT {
    private static final String U1 = "11111111-1111-1111-1111-111111111111";
    private static final String U2 = "22222222-2222-2222-2222-222222222222";
    private CdcFixture fx;
    private String notes;

    @BeforeEach
    void setUp() throws Exception {
        fx = new CdcFixture(PostgresServer.shared(), NatsServer.shared());
        fx.startWorker(Map.of("CDC_MAX_RECORD_BYTES", "2048"));
        fx.createProject();
        notes = "\"" + fx.schema + "\".notes";
        fx.sql(
                "CREATE TABLE " + notes + "(id bigserial PRIMARY KEY, owner_id uuid, body text)",
                "ALTER TABLE " + notes + " REPLICA IDENTITY FULL",
                "GRANT SELECT ON " + notes + " TO aura_anon, aura_authenticated",
                "ALTER TABLE " + notes + " ENABLE ROW LEVEL SECURITY",
                "CREATE POLICY own_notes ON " + notes + " FOR SELECT USING (owner_id = auth.uid())");
        fx.enable("notes");
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    private List<String> allowed(CdcFixture.Received r) {
        List<String> ids = new ArrayList<>();
        r.body().get("allowed_sub_ids").forEach(n -> ids.add(n.asText()));
        return ids;
    }

    @Test
    void eachSubscriberSeesOnlyRowsItsPolicyAllowsAndABrokenClaimDeniesOnlyItsOwner() throws Exception {
        String a = fx.subscribeAs(fx.projectId, "notes", "*", null, "authenticated", U1);
        String b = fx.subscribeAs(fx.projectId, "notes", "*", null, "authenticated", U2);
        String anon = fx.subscribeAs(fx.projectId, "notes", "*", null, "anon", null);
        String service = fx.subscribe("notes", "*", null);
        String broken = fx.subscribeAs(fx.projectId, "notes", "*", null, "authenticated", "not-a-uuid");
        fx.awaitCaptured("notes");

        // one transaction, so the two rows reach the shard together (two autocommit INSERTs were
        // two shard runs on a busy machine: 10 queries, each run's 5 rightly counted)
        fx.sql("INSERT INTO " + notes + "(owner_id, body) VALUES ('" + U1 + "', 'one'), ('" + U2 + "', 'two')");
        List<CdcFixture.Received> got = fx.await(r -> r.size() >= 2, Duration.ofSeconds(15));

        assertThat(allowed(got.get(0))).containsExactlyInAnyOrder(a, service);
        assertThat(allowed(got.get(1))).containsExactlyInAnyOrder(b, service);
        assertThat(got).allSatisfy(r -> assertThat(allowed(r)).doesNotContain(anon, broken));
        assertThat(fx.worker().meters().get("aura.cdc.rls.errors").counter().count())
                .isGreaterThanOrEqualTo(1);
        // One query per distinct claim set per batch, not per (change, subscriber).
        double queries =
                fx.worker().meters().get("aura.cdc.rls.queries").counter().count();
        assertThat(queries).isLessThanOrEqualTo(8);

        // A DELETE cannot be checked (the row is gone): matched subscribers get it with the key only.
        fx.sql("DELETE FROM " + notes + " WHERE body = 'one'");
        CdcFixture.Received delete =
                fx.await(r -> r.size() >= 3, Duration.ofSeconds(15)).get(2);
        assertThat(delete.data().get("type").asText()).isEqualTo("DELETE");
        assertThat(allowed(delete)).contains(a, b, service);
        JsonNode old = delete.data().get("old_record");
        assertThat(old.has("id")).isTrue();
        assertThat(old.has("body")).isFalse();
        assertThat(old.has("owner_id")).isFalse();
    }

    @Test
    void aSchemaGrantThatLetsOtherProjectsInIsRevokedAtProvisioningAndReportedAfter() throws Exception {
        String schema = "\"" + fx.schema + "\"";
        // the project is provisioned on first use: make sure it was, then grant as Supabase would
        fx.subscribeAs(fx.projectId, "notes", "*", null, "anon", null);
        fx.sql("INSERT INTO \"" + fx.schema + "\".notes(owner_id, body) VALUES (NULL, 'provision')");
        Awaitility.await()
                .atMost(Duration.ofSeconds(15))
                .until(() -> String.valueOf(RealtimeSchemas.VERSION)
                        .equals(fx.queryOne("SELECT realtime_schema_version FROM aura_platform.projects"
                                + " WHERE project_id = '" + fx.projectId + "'")));
        assertThat(fx.queryOne("SELECT has_schema_privilege('aura_anon', '" + fx.schema + "', 'USAGE')::text"))
                .isEqualTo("false");
        fx.sql("GRANT USAGE ON SCHEMA " + schema + " TO aura_anon");
        Awaitility.await()
                .atMost(Duration.ofSeconds(15))
                .until(
                        () -> fx.health().at("/tenant_sql/exposed_projects").toString(),
                        e -> e.contains(fx.projectId) && e.contains("aura_anon"));
        fx.sql("REVOKE USAGE ON SCHEMA " + schema + " FROM aura_anon");
        Awaitility.await()
                .atMost(Duration.ofSeconds(15))
                .until(() -> fx.health().at("/tenant_sql/exposed_projects").toString(), e -> !e.contains(fx.projectId));
    }

    @Test
    void turningRowLevelSecurityOffOpensTheTableWithinTheCacheRefresh() throws Exception {
        String anon = fx.subscribeAs(fx.projectId, "notes", "INSERT", null, "anon", null);
        fx.awaitCaptured("notes");
        fx.sql("INSERT INTO " + notes + "(owner_id, body) VALUES ('" + U1 + "', 'hidden')");
        fx.awaitSettled();
        assertThat(fx.received).isEmpty(); // denied for everyone: not published at all

        fx.sql("ALTER TABLE " + notes + " DISABLE ROW LEVEL SECURITY");
        // Rows inserted while the worker still has RLS on in its cache (2 s) are denied; once the
        // cache expires, the next one reaches the anon subscriber.
        Awaitility.await()
                .atMost(Duration.ofSeconds(15))
                .pollInterval(Duration.ofMillis(500))
                .until(() -> {
                    fx.sql("INSERT INTO " + notes + "(owner_id, body) VALUES ('" + U1 + "', 'public now')");
                    return !fx.received.isEmpty();
                });
        CdcFixture.Received r = fx.received.get(0);
        assertThat(allowed(r)).containsExactly(anon);
        assertThat(r.data().get("record").get("body").asText()).isEqualTo("public now");
    }

    @Test
    void aRecordOverTheLimitKeepsOnlySmallValuesAndSaysPayloadTooLarge() throws Exception {
        fx.subscribe("notes", "*", null);
        fx.awaitCaptured("notes");
        fx.sql("INSERT INTO " + notes + "(owner_id, body) VALUES ('" + U1 + "', repeat('x', 5000))");
        CdcFixture.Received r =
                fx.await(l -> !l.isEmpty(), Duration.ofSeconds(15)).get(0);
        assertThat(r.data().get("errors").get(0).asText()).isEqualTo("Error 413: Payload Too Large");
        assertThat(r.data().get("record").has("id")).isTrue();
        assertThat(r.data().get("record").has("owner_id")).isTrue();
        assertThat(r.data().get("record").has("body")).isFalse();
    }

    @Test
    void anotherProjectsSubscribersNeverSeeThisProjectsChanges() throws Exception {
        String other = UUID.randomUUID().toString();
        String otherSchema = "project_" + other.replace('-', '_');
        fx.sql(
                "CREATE SCHEMA \"" + otherSchema + "\"",
                "INSERT INTO aura_platform.projects VALUES ('" + other + "', '" + otherSchema + "')",
                "CREATE TABLE \"" + otherSchema + "\".notes(id bigserial PRIMARY KEY, owner_id uuid, body text)",
                "INSERT INTO aura_platform.realtime_tables(project_id, table_name) VALUES ('" + other + "', 'notes')");
        String mine = fx.subscribe("notes", "*", null);
        // A subscriber of the other project, whatever table text it registered, is keyed by its own project.
        String theirs = fx.subscribeAs(other, "notes", "*", null, "service_role", null);
        String sneaky = fx.subscribeAs(other, fx.schema + ".notes", "*", null, "service_role", null);
        String wildcard = fx.subscribeAs(other, "*", "*", null, "service_role", null);
        fx.awaitCaptured("notes");
        fx.sql("INSERT INTO " + notes + "(owner_id, body) VALUES ('" + U1 + "', 'mine')");
        CdcFixture.Received r =
                fx.await(l -> !l.isEmpty(), Duration.ofSeconds(15)).get(0);
        assertThat(allowed(r)).containsExactly(mine).doesNotContain(theirs, sneaky, wildcard);
        assertThat(r.subject()).contains(fx.projectId).doesNotContain(other);
    }
}
