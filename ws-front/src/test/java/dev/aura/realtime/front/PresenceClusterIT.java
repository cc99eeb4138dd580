package dev.aura.realtime.front;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.wire.WireJson;
import dev.aura.realtime.front.testing.FrontCluster;
import dev.aura.realtime.front.testing.WsTestClient;
import io.nats.client.Connection;
import io.nats.client.KeyValue;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Presence across two ws-front replicas on one real nats-server (raw vsn 2.0.0 clients), with a
 * 3 s bucket max age so crash expiry is observable. The NATS restart runs last.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PresenceClusterIT {
    /** How long a frame may take: generous, a loaded machine only makes frames late. */
    private static final Duration WAIT = Duration.ofSeconds(15);

    private static final long MAX_AGE_MS = 3000;
    private static final long RECONCILE_MS = 500;
    /** nats-server's expiry timer, one listing of the bucket and the diff's batch window, on a loaded machine. */
    private static final long EXPIRY_SLACK_MS = 1_000;
    /** The server's and this JVM's clocks read the same system clock at millisecond grain. */
    private static final long CLOCK_MS = 50;

    @AutoClose
    private static FrontCluster cluster;

    private static FrontApp a;
    private static FrontApp b;
    private final ObjectMapper mapper = WireJson.mapper();

    @BeforeAll
    static void start() throws Exception {
        cluster = FrontCluster.start(Map.of(
                "WS_IO_THREADS",
                "1",
                "PRESENCE_MAX_AGE_MS",
                Long.toString(MAX_AGE_MS),
                "PRESENCE_RECONCILE_MS",
                Long.toString(RECONCILE_MS),
                "WS_MAX_PRESENCE_EVENTS_PER_SECOND",
                "5"));
        a = cluster.replica("front-a");
        b = cluster.replica("front-b");
    }

    @AfterEach
    void closeClients() {
        cluster.closeClients();
    }

    /** Connects to {@code app} and joins {@code topic} with presence enabled, without a key. */
    private WsTestClient listener(FrontApp app, String topic) throws Exception {
        WsTestClient c = cluster.connect(app);
        join(c, topic, "{\"enabled\":true}");
        return c;
    }

    /** Connects to {@code app}, joins {@code topic} with {@code presenceConfig} and tracks {@code meta} (ref 2). */
    private WsTestClient tracker(FrontApp app, String topic, String presenceConfig, String meta) throws Exception {
        WsTestClient c = cluster.connect(app);
        join(c, topic, presenceConfig);
        track(c, "2", topic, meta);
        return c;
    }

    /** Joins and returns the presence_state when presence is enabled (else null). */
    private JsonNode join(WsTestClient c, String topic, String presenceConfig) throws Exception {
        c.send("[\"1\",\"1\",\"" + topic + "\",\"phx_join\",{\"config\":{\"presence\":" + presenceConfig + "}}]");
        JsonNode reply = next(c, f -> true);
        assertThat(reply.get(3).asText()).isEqualTo("phx_reply");
        assertThat(reply.at("/4/status").asText()).isEqualTo("ok");
        return presenceConfig.contains("\"enabled\":false")
                ? null
                : next(c, f -> f.get(3).asText().equals("presence_state")).get(4);
    }

    private JsonNode send(WsTestClient c, String ref, String topic, String payload) throws Exception {
        c.send("[\"1\",\"" + ref + "\",\"" + topic + "\",\"presence\"," + payload + "]");
        return next(
                        c,
                        f -> f.get(3).asText().equals("phx_reply")
                                && f.get(1).asText().equals(ref))
                .get(4);
    }

    private JsonNode track(WsTestClient c, String ref, String topic, String meta) throws Exception {
        JsonNode reply = send(c, ref, topic, "{\"type\":\"presence\",\"event\":\"track\",\"payload\":" + meta + "}");
        assertThat(reply.get("status").asText()).isEqualTo("ok");
        return reply;
    }

    /** The next text frame matching {@code p} within {@code timeout}; others are skipped. */
    private JsonNode next(WsTestClient c, Predicate<JsonNode> p, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            WsTestClient.Received r = c.poll(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
            if (r != null && !r.binary()) {
                JsonNode f = mapper.readTree(r.text());
                if (p.test(f)) {
                    return f;
                }
            }
        }
        throw new AssertionError("no matching frame within " + timeout);
    }

    private JsonNode next(WsTestClient c, Predicate<JsonNode> p) throws Exception {
        return next(c, p, WAIT);
    }

    private static boolean diff(JsonNode f) {
        return f.get(3).asText().equals("presence_diff");
    }

    private void assertNoFrame(WsTestClient c, Duration window) throws Exception {
        WsTestClient.Received r = c.poll(window);
        assertThat(r == null ? null : r.text()).as("no further frame").isNull();
    }

    @Test
    @Order(1)
    void trackReTrackUntrackAndCloseAreSeenOnTheOtherReplica() throws Exception {
        WsTestClient b1 = cluster.connect(b);
        assertThat(join(b1, "realtime:lobby", "{\"enabled\":true}").size()).isZero();
        WsTestClient a1 =
                tracker(a, "realtime:lobby", "{\"key\":\"alice\",\"enabled\":true}", "{\"status\":\"online\"}");
        JsonNode join = next(b1, PresenceClusterIT::diff).get(4);
        JsonNode meta = join.at("/joins/alice/metas/0");
        assertThat(meta.get("status").asText()).isEqualTo("online");
        String ref1 = meta.get("phx_ref").asText();
        assertThat(join.get("leaves").size()).isZero();
        assertThat(next(a1, PresenceClusterIT::diff)
                        .at("/4/joins/alice/metas/0/phx_ref")
                        .asText())
                .as("the tracker sees itself")
                .isEqualTo(ref1);

        WsTestClient b2 = cluster.connect(b);
        JsonNode state = join(b2, "realtime:lobby", "{\"enabled\":true}");
        assertThat(state.at("/alice/metas/0/phx_ref").asText())
                .as("late joiner's presence_state")
                .isEqualTo(ref1);

        track(a1, "3", "realtime:lobby", "{\"status\":\"away\"}");
        JsonNode retrack = next(b1, PresenceClusterIT::diff).get(4);
        assertThat(retrack.at("/joins/alice/metas")).hasSize(1);
        assertThat(retrack.at("/joins/alice/metas/0/status").asText()).isEqualTo("away");
        assertThat(retrack.at("/joins/alice/metas/0/phx_ref_prev").asText()).isEqualTo(ref1);
        assertThat(retrack.at("/leaves/alice/metas")).hasSize(1);
        assertThat(retrack.at("/leaves/alice/metas/0/phx_ref").asText()).isEqualTo(ref1);
        String ref2 = retrack.at("/joins/alice/metas/0/phx_ref").asText();

        assertThat(send(a1, "4", "realtime:lobby", "{\"type\":\"presence\",\"event\":\"untrack\"}")
                        .get("status")
                        .asText())
                .isEqualTo("ok");
        JsonNode untrack = next(b1, PresenceClusterIT::diff).get(4);
        assertThat(untrack.get("joins").size()).isZero();
        assertThat(untrack.at("/leaves/alice/metas/0/phx_ref").asText()).isEqualTo(ref2);

        track(a1, "5", "realtime:lobby", "{\"status\":\"back\"}");
        String ref3 = next(b1, PresenceClusterIT::diff)
                .at("/4/joins/alice/metas/0/phx_ref")
                .asText();
        a1.close();
        JsonNode closed = next(b1, PresenceClusterIT::diff).get(4);
        assertThat(closed.at("/leaves/alice/metas/0/phx_ref").asText())
                .as("socket close untracks at once")
                .isEqualTo(ref3);
        assertNoFrame(b1, Duration.ofMillis(300));
    }

    @Test
    @Order(2)
    void aClientThatOnlyTracksIsVisibleButGetsNoPresenceItself() throws Exception {
        WsTestClient listener = listener(b, "realtime:quiet");
        WsTestClient tracker = tracker(a, "realtime:quiet", "{\"key\":\"\",\"enabled\":false}", "{\"n\":1}");
        JsonNode joins = next(listener, PresenceClusterIT::diff).at("/4/joins");
        assertThat(joins.size()).isEqualTo(1);
        String generatedKey = joins.fieldNames().next();
        assertThat(generatedKey).as("generated key for an empty config key").hasSize(36);
        assertThat(joins.at("/" + generatedKey + "/metas/0/n").asInt()).isEqualTo(1);
        assertNoFrame(tracker, Duration.ofMillis(300));
    }

    @Test
    @Order(3)
    void aNonObjectPayloadIsRefusedAndTooManyPresenceMessagesCloseTheChannel() throws Exception {
        WsTestClient c = cluster.connect(a);
        join(c, "realtime:limits", "{\"enabled\":true}");
        JsonNode refused =
                send(c, "2", "realtime:limits", "{\"type\":\"presence\",\"event\":\"track\",\"payload\":[1]}");
        assertThat(refused.get("status").asText()).isEqualTo("error");
        assertThat(refused.at("/response/reason").asText()).isEqualTo("Presence track payload must be a map");
        for (int i = 0; i < 10; i++) {
            c.send("[\"1\",\"r" + i
                    + "\",\"realtime:limits\",\"presence\",{\"type\":\"presence\",\"event\":\"track\",\"payload\":{\"i\":"
                    + i + "}}]");
        }
        JsonNode system = next(c, f -> f.get(3).asText().equals("system")).get(4);
        assertThat(system.get("status").asText()).isEqualTo("error");
        assertThat(system.get("message").asText()).isEqualTo("Too many presence messages per second");
        next(c, f -> f.get(3).asText().equals("phx_close"));
    }

    @Test
    @Order(4)
    void aCrashedReplicasPresencesLeaveWithinTheMaxAge() throws Exception {
        WsTestClient listener = listener(b, "realtime:crash");
        FrontApp c = cluster.replica("front-c");
        try {
            tracker(c, "realtime:crash", "{\"key\":\"ghost\",\"enabled\":true}", "{}");
            assertThat(next(listener, PresenceClusterIT::diff).at("/4/joins").has("ghost"))
                    .isTrue();

            c.nats().connection().close(); // no refresh, no delete from now on
            c.close();
            // the ghost's last put, as nats-server stamped it: no refresh can follow it
            ZonedDateTime lastPut;
            try (Connection test = cluster.nats().connect()) {
                KeyValue bucket = test.keyValue("aura_presence");
                String key = bucket.keys().stream()
                        .filter(k -> k.contains("ghost"))
                        .findFirst()
                        .orElseThrow();
                lastPut = bucket.get(key).getCreated();
            }
            // The leave cannot come from a delete (the link was closed before the replica): it is
            // the entry's expiry, seen by the first reconciliation after it. Not before the max
            // age after the last put (the key is listed until then), and within one reconcile
            // interval after it; the slack is nats-server's expiry timer, the listing and the
            // diff's batch window on a loaded machine. The wait only bounds a hang.
            JsonNode leave = next(listener, PresenceClusterIT::diff, Duration.ofMillis(MAX_AGE_MS * 10))
                    .get(4);
            long afterExpiryMs =
                    ChronoUnit.MILLIS.between(lastPut.plus(Duration.ofMillis(MAX_AGE_MS)), ZonedDateTime.now());
            System.out.printf(
                    "crashed replica's presence left %d ms after its entry's max age (reconcile every %d ms)%n",
                    afterExpiryMs, RECONCILE_MS);
            assertThat(afterExpiryMs)
                    .as("ms from the ghost's expiry (last put + %d ms) to its leave", MAX_AGE_MS)
                    .isBetween(-CLOCK_MS, RECONCILE_MS + EXPIRY_SLACK_MS);
            assertThat(leave.at("/leaves").has("ghost")).isTrue();
        } finally {
            c.close();
        }
    }

    @Test
    @Order(5)
    void afterANatsRestartEveryReplicaRePutsItsPresences() throws Exception {
        WsTestClient listener = listener(b, "realtime:restart");
        tracker(a, "realtime:restart", "{\"key\":\"survivor\",\"enabled\":true}", "{}");
        String ref = next(listener, PresenceClusterIT::diff)
                .at("/4/joins/survivor/metas/0/phx_ref")
                .asText();

        cluster.nats().kill();
        cluster.nats().restart(); // a new server process: the memory bucket is lost
        try (Connection test = cluster.nats().connect()) {
            // a reconnect (500 ms), then JetStream answering the restarted server (retried every second)
            await().atMost(Duration.ofSeconds(15))
                    .alias("re-put after the restart")
                    .ignoreExceptions() // the bucket does not exist until a replica re-creates it
                    .until(() -> test.keyValue("aura_presence").keys().stream().anyMatch(k -> k.contains("survivor")));
        }
        WsTestClient late = cluster.connect(b);
        JsonNode state = join(late, "realtime:restart", "{\"enabled\":true}");
        assertThat(state.at("/survivor/metas/0/phx_ref").asText())
                .as("replica B re-watched the new bucket")
                .isEqualTo(ref);
        assertNoFrame(listener, Duration.ofMillis(MAX_AGE_MS));
    }
}
