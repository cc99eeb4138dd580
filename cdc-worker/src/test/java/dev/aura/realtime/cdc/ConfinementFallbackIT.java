package dev.aura.realtime.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.cdc.provision.RealtimeSchemas;
import dev.aura.realtime.common.wire.ChannelAccess;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.WireJson;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import io.nats.client.Message;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Issue 36, point 4, where Postgres cannot make the confinement uneditable: a platform login with
 * CREATEROLE but not superuser (managed Postgres) cannot create the event trigger that guards the
 * platform's objects. The statements that commit tenant code (persisted broadcasts, the janitor)
 * are then refused with a clear error and {@code /health} says why, while the checks that roll
 * back go on; once a superuser installs the guard from the file the worker ships
 * ({@code cdc-worker/src/main/resources/sql/confinement-guard.sql}), they commit again.
 *
 * <p>Before the fix (8c27465) this FAILS: {@code /health} has no {@code confinement} and the
 * persisted broadcast commits, with nothing to stop a deferred trigger from editing the runners.
 */
class ConfinementFallbackIT {
    private static final Duration T = Duration.ofSeconds(20);
    private static final ObjectMapper JSON = WireJson.mapper();
    private static final Path GUARD_SQL = Path.of("src/main/resources/sql/confinement-guard.sql");

    @Test
    void withoutASuperuserPersistAndTheJanitorAreRefusedUntilTheGuardIsInstalled() throws Exception {
        try (PostgresServer pg = PostgresServer.start();
                CdcFixture fx = new CdcFixture(pg, NatsServer.shared())) {
            String platform =
                    "platform_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
            pg.execute(
                    "CREATE ROLE " + platform + " LOGIN CREATEROLE PASSWORD 'platform-pw'",
                    "GRANT CREATE ON DATABASE postgres TO " + platform,
                    "CREATE ROLE owner_p NOLOGIN",
                    "GRANT owner_p TO " + platform);
            fx.startWorker(Map.of(
                    "POSTGRES_URL", pg.jdbcUrl(platform, "platform-pw"),
                    "CDC_TABLE_REFRESH_MS", "200",
                    "CDC_MESSAGES_JANITOR_MS", "1000"));
            String rt = "\"" + RealtimeSchemas.nameOf(fx.projectId) + "\"";
            pg.execute(
                    "CREATE SCHEMA \"" + fx.schema + "\" AUTHORIZATION owner_p",
                    "INSERT INTO aura_platform.projects(project_id, schema_name) VALUES ('" + fx.projectId + "', '"
                            + fx.schema + "')");
            Awaitility.await()
                    .atMost(T)
                    .until(() -> String.valueOf(RealtimeSchemas.VERSION)
                            .equals(pg.queryOne("SELECT realtime_schema_version FROM aura_platform.projects"
                                    + " WHERE project_id = '" + fx.projectId + "'")));
            pg.execute(
                    "SET ROLE owner_p",
                    "CREATE POLICY writes ON " + rt + ".messages FOR INSERT TO aura_authenticated WITH CHECK (true)",
                    "RESET ROLE",
                    "INSERT INTO " + rt + ".messages(topic, extension, private, event, inserted_at)"
                            + " VALUES ('old', 'broadcast', true, 'old', now() - interval '100 days')");

            JsonNode confinement = fx.health().path("tenant_sql").path("confinement");
            assertThat(confinement.path("guarded").asBoolean(true))
                    .as(confinement.toString())
                    .isFalse();
            assertThat(confinement.path("reason_code").asText()).isEqualTo("confinement_unguarded");
            assertThat(confinement.path("reason").asText()).contains("superuser");
            assertThat(fx.health().path("tenant_sql").path("rls_checks").asBoolean())
                    .isTrue();

            // the checks that roll back go on; the persisted broadcast is refused, saying why
            assertThat(ask(fx, ChannelAccess.Request.write(fx.projectId, "room", "authenticated", "{}", "broadcast"))
                            .write())
                    .isTrue();
            ChannelAccess.Reply refused = ask(
                    fx,
                    ChannelAccess.Request.persist(
                            fx.projectId, "room", "authenticated", "{}", "note", JSON.readTree("{}")));
            assertThat(refused.error()).startsWith("PersistUnavailable:");
            assertThat(pg.queryOne("SELECT count(*) FROM " + rt + ".messages WHERE event = 'note'"))
                    .isEqualTo("0");
            // nor does the janitor commit (its period is 1 s: it would have run twice meanwhile)
            Thread.sleep(2_500);
            assertThat(pg.queryOne("SELECT count(*) FROM " + rt + ".messages WHERE event = 'old'"))
                    .isEqualTo("1");

            // a superuser installs the guard the worker ships; the next pass sees it
            pg.execute(Files.readString(GUARD_SQL));
            Awaitility.await()
                    .atMost(T)
                    .until(() -> fx.health()
                            .path("tenant_sql")
                            .path("confinement")
                            .path("guarded")
                            .asBoolean());
            ChannelAccess.Reply stored = ask(
                    fx,
                    ChannelAccess.Request.persist(
                            fx.projectId, "room", "authenticated", "{}", "note", JSON.readTree("{}")));
            assertThat(stored.error()).isNull();
            Awaitility.await()
                    .atMost(T)
                    .until(() -> pg.queryOne("SELECT count(*) FROM " + rt + ".messages WHERE event = 'old'")
                            .equals("0"));
        }
    }

    private static ChannelAccess.Reply ask(CdcFixture fx, ChannelAccess.Request request) throws Exception {
        Message reply =
                fx.nats.request(Subjects.CHANNEL_ACCESS, JSON.writeValueAsBytes(request), Duration.ofSeconds(10));
        assertThat(reply).as("a cdc-worker answers " + request.op()).isNotNull();
        return JSON.readValue(reply.getData(), ChannelAccess.Reply.class);
    }
}
