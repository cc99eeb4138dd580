package dev.aura.realtime.e2e.bus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.common.wire.AuraHeaders;
import dev.aura.realtime.common.wire.KvBuckets;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import dev.aura.realtime.common.wire.WireJson;
import dev.aura.realtime.e2e.E2eStack;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.RealtimeJsClient;
import dev.aura.realtime.testkit.RegistryEntries;
import io.nats.client.Connection;
import io.nats.client.KeyValue;
import io.nats.client.Message;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.Subscription;
import io.nats.client.impl.Headers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Issue 15, "nothing unauthenticated speaks on the bus": with the real binaries and realtime-js,
 * on a nats-server of its own (its bucket keeps the forged entries), a forged registry entry
 * written with ws-front's own credentials is refused by the cdc-worker, a client without
 * credentials cannot connect, and ws-front's credentials cannot publish a change event.
 */
class BusTrustE2EIT {
    private static final ObjectMapper JSON = WireJson.mapper();

    @Test
    void forgedEntriesAndForgedChangesNeverReachAClient() throws Exception {
        try (NatsServer nats = NatsServer.start();
                E2eStack stack = E2eStack.start(PostgresServer.shared(), nats, 1);
                RealtimeJsClient js = RealtimeJsClient.start();
                Connection observer = nats.connect();
                Connection asFront = nats.connect(NatsServer.User.WS_FRONT)) {
            String victim = stack.projectId;
            String attacker = UUID.randomUUID().toString();
            stack.createProject(attacker);
            stack.createEnabledTable("t", "(id int PRIMARY KEY)");
            js.connect(stack.wsUrl(0), stack.tokens.anon(victim), "1.0.0", Map.of());
            js.channel("db");
            js.onPostgresChanges("db", Map.of("event", "INSERT", "schema", "public", "table", "t"));
            js.onSystem("db");
            js.subscribeAndAwait("db", Duration.ofSeconds(20));
            js.awaitEvent(
                    e -> e.path("payload").path("message").asText().contains("PostgreSQL"), Duration.ofSeconds(15));

            // Entries that would see every row of the victim's table if they were trusted.
            KeyValue registry = KvBuckets.ensure(asFront, KvBuckets.registry(64L * 1024 * 1024));
            List<String> forged = new ArrayList<>();
            forged.add(put(
                    registry, victim, entry(victim, RegistryEntries.claims("service_role", attacker), "service_role")));
            forged.add(put(registry, victim, entry(victim, RegistryEntries.claims("postgres", victim), "postgres")));
            SubscriptionEntry misfiled = entry(victim, RegistryEntries.claims("service_role", victim), "service_role");
            registry.put(SubscriptionEntry.key(attacker, misfiled.subId()), JSON.writeValueAsBytes(misfiled));
            forged.add(misfiled.subId());

            Subscription changes = observer.subscribe(Subjects.CHANGES + "." + Subjects.encodeToken(victim) + ".>");
            observer.flush(Duration.ofSeconds(5));
            stack.sql("INSERT INTO " + stack.table("t") + " VALUES (1)");
            Message published = changes.nextMessage(Duration.ofSeconds(20));
            assertThat(published).as("the real change is published").isNotNull();
            JsonNode allowed = JSON.readTree(published.getData()).path("allowed_sub_ids");
            assertThat(allowed).as("only the realtime-js binding: %s", allowed).hasSize(1);
            assertThat(allowed.toString()).doesNotContain(forged);
            stack.cdcWorker().waitForLog(Pattern.compile("\\[RegistryEntryInvalid\\]"), Duration.ofSeconds(5));
            assertThat(stack.cdcHttp().metric("aura_cdc_registry_entries_invalid_total"))
                    .isEqualTo(3.0);

            // No credentials, no connection.
            Options anonymous = new Options.Builder()
                    .server(nats.url())
                    .maxReconnects(0)
                    .connectionTimeout(Duration.ofSeconds(5))
                    .build();
            assertThatThrownBy(() -> Nats.connect(anonymous).close()).hasMessageContaining("Authorization Violation");

            // ws-front's credentials cannot publish a change, even one naming the real binding.
            ObjectNode fake = (ObjectNode) JSON.readTree(published.getData());
            ((ObjectNode) fake.path("data").path("record")).put("id", 666);
            asFront.publish(
                    published.getSubject(),
                    new Headers().add(AuraHeaders.EVENT_ID, "0/0:666").add(AuraHeaders.ORIGIN, "attacker"),
                    JSON.writeValueAsBytes(fake));
            asFront.flush(Duration.ofSeconds(5));
            stack.sql("INSERT INTO " + stack.table("t") + " VALUES (2)");
            js.awaitEvent(e -> isInsert(e, 2), Duration.ofSeconds(20));
            assertThat(js.events()).as("the forged change").noneMatch(e -> isInsert(e, 666));
            assertThat(js.events().stream().filter(e -> isInsert(e, 1)).count()).isEqualTo(1);
        }
    }

    private static boolean isInsert(JsonNode e, int id) {
        return "postgres_changes".equals(e.path("type").asText())
                && e.path("payload").path("new").path("id").asInt() == id;
    }

    private static SubscriptionEntry entry(String project, ObjectNode claims, String role) {
        return new SubscriptionEntry(
                UUID.randomUUID().toString(),
                project,
                "t",
                "*",
                null,
                role,
                claims,
                System.currentTimeMillis() + 3_600_000,
                "ws-front-0");
    }

    private static String put(KeyValue registry, String project, SubscriptionEntry e) throws Exception {
        registry.put(SubscriptionEntry.key(project, e.subId()), JSON.writeValueAsBytes(e));
        return e.subId();
    }
}
