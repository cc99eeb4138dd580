package dev.aura.realtime.e2e.faults;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.e2e.E2eStack;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.RealtimeJsClient;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 9, "slot invalidated": with {@code max_slot_wal_keep_size = 1MB}, a WAL burst while the
 * cdc-worker is stopped makes Postgres invalidate the slot. The restarted worker recreates it,
 * logs the LSN gap and counts it, and a real realtime-js client subscribed through ws-front
 * receives the CDC {@code system} error naming the lost slot, then {@code ok}, then changes again.
 */
@ParameterizedClass(name = "CDC_SOURCE={0}")
@ValueSource(strings = {"stream", "poll"})
class SlotLostE2EIT {
    @Parameter
    String source;

    @Test
    void aLostSlotIsRecreatedAndRealtimeJsIsToldErrorThenOk() throws Exception {
        try (PostgresServer pg = PostgresServer.builder()
                        .setting("max_slot_wal_keep_size", "1MB")
                        .setting("wal_keep_size", "0")
                        .start();
                E2eStack stack = E2eStack.start(pg, NatsServer.shared(), 1, Map.of("CDC_SOURCE", source));
                RealtimeJsClient js = RealtimeJsClient.start()) {
            stack.createEnabledTable("t", "(id int PRIMARY KEY)");
            stack.sql("CREATE TABLE burst(id int, v text)");
            js.connect(stack.wsUrl(0), stack.tokens.anon(stack.projectId), "1.0.0", Map.of());
            js.channel("db");
            js.onPostgresChanges("db", Map.of("event", "INSERT", "schema", "public", "table", "t"));
            js.onSystem("db");
            js.subscribeAndAwait("db", Duration.ofSeconds(20));
            js.awaitEvent(SlotLostE2EIT::systemOk, Duration.ofSeconds(15));

            stack.cdcWorker().stop();
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (!"lost".equals(walStatus(pg, stack.slot))) {
                assertThat(System.nanoTime())
                        .as("slot invalidated by the WAL burst")
                        .isLessThan(deadline);
                pg.execute(
                        "INSERT INTO burst SELECT g, md5(g::text) FROM generate_series(1, 20000) g",
                        "SELECT pg_switch_wal()",
                        "CHECKPOINT");
            }
            int mark = js.eventCount();
            stack.startCdcWorker(Map.of("CDC_SOURCE", source), List.of());

            int errorAt = js.awaitEventIndex(
                    mark,
                    e -> isSystem(e)
                            && "error".equals(e.path("payload").path("status").asText())
                            && e.path("payload").path("message").asText().startsWith("slot_lost"),
                    Duration.ofSeconds(30));
            JsonNode error = js.events().get(errorAt);
            // the ok may arrive right behind the error: look from the error on, not from a later count
            js.awaitEvent(errorAt + 1, SlotLostE2EIT::systemOk, Duration.ofSeconds(30));
            String gap = stack.cdcWorker()
                    .waitForLog(
                            Pattern.compile("was lost .*Changes between \\S+ and \\S+ .*are lost for good"),
                            Duration.ofSeconds(5));
            assertThat(stack.cdcHttp().health()).contains("\"cdc_active\":true");
            String metrics = stack.cdcHttp().metrics();
            assertThat(metrics).containsPattern("aura_cdc_slot_recreations_total(\\{[^}]*})? 1\\.0");

            stack.sql("INSERT INTO " + stack.table("t") + " VALUES (1)");
            js.awaitEvent(e -> "postgres_changes".equals(e.path("type").asText()), Duration.ofSeconds(20));
            System.out.println(
                    "client told: " + error.path("payload").path("message").asText() + "\nworker logged: "
                            + gap.substring(gap.indexOf("slot ")));
        }
    }

    private static boolean isSystem(JsonNode e) {
        return "system".equals(e.path("type").asText());
    }

    private static boolean systemOk(JsonNode e) {
        return isSystem(e)
                && "ok".equals(e.path("payload").path("status").asText())
                && e.path("payload").path("message").asText().contains("PostgreSQL");
    }

    private static String walStatus(PostgresServer pg, String slot) throws Exception {
        try (var c = pg.connect();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(
                        "SELECT wal_status FROM pg_replication_slots WHERE slot_name = '" + slot + "'")) {
            return rs.next() ? rs.getString(1) : null;
        }
    }
}
