package dev.aura.realtime.front.channel;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.common.wire.CdcStatus;
import dev.aura.realtime.common.wire.ChangeEvent;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import dev.aura.realtime.front.fanout.CdcHealth;
import dev.aura.realtime.front.protocol.BindingIds;
import dev.aura.realtime.front.protocol.Reasons;
import dev.aura.realtime.front.protocol.Vsn;
import dev.aura.realtime.front.relay.SubscriptionChecker.Outcome;
import dev.aura.realtime.front.testing.ChannelHarness;
import dev.aura.realtime.front.testing.FrontFixture;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class ChannelRouterTest {
    private final ChannelHarness h = new ChannelHarness();

    private static String join(String joinRef, String topic, String config) {
        return "[\"" + joinRef + "\",\"" + joinRef + "\",\"" + topic + "\",\"phx_join\",{\"config\":" + config + "}]";
    }

    /** A phx_join of {@code realtime:db} with one postgres_changes binding to every event of {@code schema.table}. */
    private static String joinChanges(String joinRef, String schema, String table) {
        return join(
                joinRef,
                "realtime:db",
                "{\"postgres_changes\":[{\"event\":\"*\",\"schema\":\"" + schema + "\",\"table\":\"" + table + "\"}]}");
    }

    /** A vsn 2.0.0 connection joined to {@code realtime:db} with every change of {@code public.t}, replies drained. */
    private ChannelHarness.Conn joinedToChangesOfT() {
        ChannelHarness.Conn c = h.connect(Vsn.V2);
        c.send(joinChanges("1", "public", "t"));
        c.drain();
        return c;
    }

    /** The {@code reason} of a reply frame. */
    private static String reason(JsonNode reply) {
        return reply.get(4).get("response").get("reason").asText();
    }

    private static void assertReply(JsonNode frame, String ref, String status) {
        assertThat(frame.get(3).asText()).isEqualTo("phx_reply");
        assertThat(frame.get(1).asText()).isEqualTo(ref);
        assertThat(frame.get(4).get("status").asText()).isEqualTo(status);
    }

    @Test
    void heartbeatIsAnsweredOnPhoenix() {
        ChannelHarness.Conn c = h.connect(Vsn.V2);
        c.send("[null,\"7\",\"phoenix\",\"heartbeat\",{}]");
        assertThat(c.next().toString())
                .isEqualTo("[null,\"7\",\"phoenix\",\"phx_reply\",{\"status\":\"ok\",\"response\":{}}]");
        c.close();
    }

    @Test
    void joinWithoutBindingsRepliesOkWithEmptyList() {
        ChannelHarness.Conn c = h.connect(Vsn.V2);
        c.send(join("1", "realtime:room", "{\"broadcast\":{\"self\":false}}"));
        JsonNode reply = c.next();
        assertThat(reply.toString())
                .isEqualTo(
                        "[\"1\",\"1\",\"realtime:room\",\"phx_reply\",{\"status\":\"ok\",\"response\":{\"postgres_changes\":[]}}]");
        assertThat(h.metrics.channels()).isEqualTo(1);
        c.close();
        assertThat(h.metrics.channels()).isZero();
        assertThat(h.sessions.size()).isZero();
    }

    @Test
    void bareTopicAndBadTokenAreRefused() {
        ChannelHarness.Conn c = h.connect(Vsn.V2);
        c.send(join("1", "realtime:", "{}"));
        assertThat(reason(c.next())).isEqualTo(Reasons.TOPIC_NAME_REQUIRED);
        String expired = h.token(Duration.ofSeconds(-12));
        c.send("[\"2\",\"2\",\"realtime:a\",\"phx_join\",{\"config\":{},\"access_token\":\"" + expired + "\"}]");
        assertThat(reason(c.next())).isEqualTo("InvalidJWTToken: Token has expired 12 seconds ago");
        c.send("[\"3\",\"3\",\"realtime:a\",\"phx_join\",{\"config\":{},\"access_token\":\"garbage\"}]");
        assertThat(reason(c.next())).startsWith("MalformedJWT");
        c.close();
    }

    @Test
    void channelLimitIsEnforced() {
        ChannelHarness.Conn c = h.connect(Vsn.V2);
        for (int i = 0; i < 3; i++) {
            c.send(join("" + i, "realtime:r" + i, "{}"));
            assertReply(c.next(), "" + i, "ok");
        }
        c.send(join("9", "realtime:r9", "{}"));
        assertThat(reason(c.next())).isEqualTo(Reasons.TOO_MANY_CHANNELS);
        c.close();
    }

    @Test
    void identicalBindingsAreCheckedAndRegisteredOnceAndEchoedEachWithOneId() {
        ChannelHarness.Conn c = h.connect(Vsn.V2);
        c.send(join(
                "1",
                "realtime:db",
                "{\"postgres_changes\":[{\"event\":\"INSERT\",\"schema\":\"public\",\"table\":\"todos\"},"
                        + "{\"event\":\"*\",\"schema\":\"public\",\"table\":\"notes\"},"
                        + "{\"event\":\"insert\",\"table\":\"todos\",\"filter\":\"\"},"
                        + "{\"event\":\"INSERT\",\"schema\":\"public\",\"table\":\"todos\"}]}"));
        JsonNode reply = c.next();
        assertReply(reply, "1", "ok");
        JsonNode list = reply.get(4).get("response").get("postgres_changes");
        assertThat(list).hasSize(4);
        assertThat(list.get(2).get("event").asText())
                .as("the client's own spelling")
                .isEqualTo("insert");
        int todos = list.get(0).get("id").asInt();
        assertThat(list.get(2).get("id").asInt()).isEqualTo(todos);
        assertThat(list.get(3).get("id").asInt()).isEqualTo(todos);
        assertThat(list.get(1).get("id").asInt()).isNotEqualTo(todos);
        assertThat(h.checker.asked).hasSize(2);
        assertThat(h.registry.live).hasSize(2);
        c.close();
    }

    @Test
    void postgresChangesJoinEchoesBindingsInClientOrderAndRegistersThem() {
        ChannelHarness.Conn c = h.connect(Vsn.V2);
        c.send(join(
                "1",
                "realtime:db",
                "{\"postgres_changes\":[{\"event\":\"INSERT\",\"schema\":\"public\",\"table\":\"todos\",\"filter\":\"id=eq.1\"},"
                        + "{\"event\":\"*\",\"schema\":\"public\",\"table\":\"notes\"}]}"));
        JsonNode reply = c.next();
        assertReply(reply, "1", "ok");
        JsonNode list = reply.get(4).get("response").get("postgres_changes");
        assertThat(list).hasSize(2);
        assertThat(list.get(0).get("table").asText()).isEqualTo("todos");
        assertThat(list.get(0).get("filter").asText()).isEqualTo("id=eq.1");
        assertThat(list.get(1).has("filter")).isFalse();
        int id0 = list.get(0).get("id").asInt();
        assertThat(id0).isPositive().isEqualTo(BindingIds.of("INSERT", "public", "todos", "id=eq.1"));
        JsonNode system = c.next();
        assertThat(system.get(3).asText()).isEqualTo("system");
        assertThat(system.get(0).asText()).isEqualTo("1");
        assertThat(system.get(4).toString())
                .isEqualTo(
                        "{\"extension\":\"postgres_changes\",\"status\":\"ok\",\"message\":\"Subscribed to PostgreSQL\",\"channel\":\"db\"}");
        assertThat(h.registry.live).hasSize(2);
        SubscriptionEntry e = h.registry.puts.get(0);
        assertThat(e.table()).isEqualTo("todos");
        assertThat(e.event()).isEqualTo("INSERT");
        assertThat(e.role()).isEqualTo("anon");
        assertThat(e.instance()).isEqualTo("front-test");
        assertThat(h.checker.asked).extracting(r -> r.table()).containsExactly("todos", "notes");

        // a change allowed for the first binding reaches the channel with its id, data verbatim
        String data =
                "{\"schema\":\"public\",\"table\":\"todos\",\"type\":\"INSERT\",\"record\":{\"id\":12345678901234567890}}";
        h.fanout.onChange(new ChangeEvent(
                "0/1:0", e.projectId(), "todos", "INSERT", List.of(e.subId(), "someone-else"), readTree(data)));
        JsonNode push = c.next();
        assertThat(push.toString())
                .isEqualTo("[null,null,\"realtime:db\",\"postgres_changes\",{\"ids\":[" + id0 + "],\"data\":" + data
                        + "}]");
        c.close();
        assertThat(h.registry.live).isEmpty();
        assertThat(h.registry.removed).hasSize(2);
    }

    @Test
    void invalidBindingFailsTheJoinWithTheWorkersReason() {
        h.checker.byTable.put(
                "secret", new Outcome.Invalid("RealtimeDisabledForConfiguration: table secret is not enabled"));
        ChannelHarness.Conn c = h.connect(Vsn.V2);
        c.send(joinChanges("1", "public", "secret"));
        JsonNode reply = c.next();
        assertReply(reply, "1", "error");
        assertThat(reason(reply)).startsWith("RealtimeDisabledForConfiguration");
        assertThat(h.registry.live).isEmpty();
        assertThat(c.next()).isNull();
        c.close();
    }

    @Test
    void aBindingTheWorkerAcceptsWithANoticeIsToldWhatItWillNotReceive() {
        String notice = "PostgresChangesDeleteNotDelivered: DELETE events are not delivered to the binding";
        h.checker.byTable.put("notes", new Outcome.Valid("int4", notice));
        ChannelHarness.Conn c = h.connect(Vsn.V2);
        c.send(join(
                "1",
                "realtime:db",
                "{\"postgres_changes\":[{\"event\":\"*\",\"schema\":\"public\",\"table\":\"notes\","
                        + "\"filter\":\"secret=eq.42\"}]}"));
        assertReply(c.next(), "1", "ok");
        assertThat(c.next().get(4).get("message").asText()).isEqualTo("Subscribed to PostgreSQL");
        JsonNode told = c.next();
        assertThat(told.get(4).get("status").asText()).isEqualTo("error");
        assertThat(told.get(4).get("message").asText()).isEqualTo(notice);
        // the worker was asked with the binding's event and the token's role
        assertThat(h.checker.asked.get(0).event()).isEqualTo("*");
        assertThat(h.checker.asked.get(0).role()).isEqualTo("anon");
        c.close();
    }

    @Test
    void unavailableCdcAcceptsTheJoinAndWarns() {
        h.checker.byTable.put("t", new Outcome.Unavailable("no responders"));
        ChannelHarness.Conn c = h.connect(Vsn.V2);
        c.send(join("1", "realtime:db", "{\"postgres_changes\":[{\"event\":\"*\",\"table\":\"t\"}]}"));
        JsonNode reply = c.next();
        assertReply(reply, "1", "ok");
        assertThat(reply.get(4).get("response").get("postgres_changes").get(0).has("schema"))
                .isFalse();
        JsonNode system = c.next();
        assertThat(system.get(4).get("status").asText()).isEqualTo("error");
        assertThat(system.get(4).get("message").asText()).isEqualTo(Reasons.CDC_UNAVAILABLE);
        assertThat(h.registry.live).hasSize(1);
        c.close();
    }

    @Test
    void otherSchemasAreRefused() {
        ChannelHarness.Conn c = h.connect(Vsn.V2);
        c.send(joinChanges("1", "auth", "users"));
        assertThat(reason(c.next())).startsWith("Unable to subscribe to changes with given parameters");
        c.close();
    }

    @Test
    void leaveRepliesOkThenCloses() {
        ChannelHarness.Conn c = joinedToChangesOfT();
        c.send("[\"1\",\"2\",\"realtime:db\",\"phx_leave\",{}]");
        assertReply(c.next(), "2", "ok");
        assertThat(c.next().toString()).isEqualTo("[\"1\",\"1\",\"realtime:db\",\"phx_close\",{}]");
        assertThat(h.registry.live).isEmpty();
        c.send("[\"1\",\"3\",\"realtime:db\",\"broadcast\",{\"type\":\"broadcast\",\"event\":\"e\",\"payload\":{}}]");
        assertThat(reason(c.next())).isEqualTo(Reasons.UNMATCHED_TOPIC);
        c.close();
    }

    @Test
    void secondJoinOfATopicReplacesTheFirst() {
        ChannelHarness.Conn c = joinedToChangesOfT();
        String firstKey = h.registry.live.keySet().iterator().next();
        c.send(joinChanges("5", "public", "t"));
        assertThat(c.next().toString()).isEqualTo("[\"1\",\"1\",\"realtime:db\",\"phx_close\",{}]");
        assertReply(c.next(), "5", "ok");
        assertThat(h.registry.live).hasSize(1).doesNotContainKey(firstKey);
        assertThat(h.metrics.channels()).isEqualTo(1);
        c.close();
    }

    @Test
    void broadcastReachesOthersNotSelfAndIsPublishedAndAcked() {
        ChannelHarness.Conn sender = h.connect(Vsn.V2);
        ChannelHarness.Conn v2 = h.connect(Vsn.V2);
        ChannelHarness.Conn v1 = h.connect(Vsn.V1);
        sender.send(join("1", "realtime:room", "{\"broadcast\":{\"self\":false,\"ack\":true}}"));
        v2.send(join("1", "realtime:room", "{}"));
        v1.send(
                "{\"topic\":\"realtime:room\",\"event\":\"phx_join\",\"payload\":{\"config\":{}},\"ref\":\"1\",\"join_ref\":\"1\"}");
        sender.drain();
        v2.drain();
        v1.drain();
        sender.sendBinary(kind3("1", "2", "realtime:room", "cursor", "{\"x\":1}"));
        assertReply(sender.next(), "2", "ok");
        assertThat(sender.next()).isNull();
        byte[] frame = v2.nextBinary();
        assertThat(frame[0]).isEqualTo((byte) 4);
        assertThat(new String(frame, StandardCharsets.UTF_8))
                .contains("realtime:room")
                .contains("cursor")
                .endsWith("{\"x\":1}");
        JsonNode v1Frame = v1.next();
        assertThat(v1Frame.get("event").asText()).isEqualTo("broadcast");
        assertThat(v1Frame.get("payload").get("payload").toString()).isEqualTo("{\"x\":1}");
        assertThat(v1Frame.get("payload").get("meta").get("id").asText()).isNotBlank();
        assertThat(h.publisher.published).hasSize(1);
        assertThat(h.publisher.published.get(0).channel()).isEqualTo("room");
        assertThat(h.history.since(h.publisher.published.get(0).projectId(), "room", 0, 10, h.clock.millis()))
                .hasSize(1);
        sender.close();
        v2.close();
        v1.close();
    }

    @Test
    void selfTrueEchoesAndOversizedPayloadIsRefused() {
        ChannelHarness.Conn c = h.connect(Vsn.V2);
        c.send(join("1", "realtime:room", "{\"broadcast\":{\"self\":true,\"ack\":true}}"));
        c.drain();
        c.send(
                "[\"1\",\"2\",\"realtime:room\",\"broadcast\",{\"type\":\"broadcast\",\"event\":\"e\",\"payload\":{\"a\":1}}]");
        // the ack is written by the sender's own handler; the echo, like every delivery, by the
        // loop's delivery queue after it (Supabase's channel process replies before its PubSub echo)
        assertReply(c.next(), "2", "ok");
        assertThat(c.nextBinary()[0]).isEqualTo((byte) 4);
        c.send("[\"1\",\"3\",\"realtime:room\",\"broadcast\",{\"type\":\"broadcast\",\"event\":\"e\",\"payload\":\""
                + "x".repeat(100) + "\"}]");
        JsonNode refused = c.next();
        assertReply(refused, "3", "error");
        assertThat(reason(refused)).startsWith("PayloadTooLarge");
        c.close();
    }

    @Test
    void tokenExpiryClosesTheChannelWithASystemMessage() {
        ChannelHarness.Conn c = h.connect(Vsn.V2);
        c.ch.freezeTime();
        c.send("[\"1\",\"1\",\"realtime:room\",\"phx_join\",{\"config\":{},\"access_token\":\""
                + h.token(Duration.ofSeconds(30)) + "\"}]");
        assertReply(c.next(), "1", "ok");
        h.clock.advance(Duration.ofSeconds(31));
        c.ch.advanceTimeBy(31, java.util.concurrent.TimeUnit.SECONDS);
        c.ch.runScheduledPendingTasks();
        JsonNode system = c.next();
        assertThat(system.get(4).toString())
                .isEqualTo(
                        "{\"extension\":\"system\",\"status\":\"error\",\"message\":\"Token has expired 1 seconds ago\",\"channel\":\"room\"}");
        assertThat(c.next().get(3).asText()).isEqualTo("phx_close");
        c.close();
    }

    @Test
    void accessTokenRefreshRePutsEntriesAndABadOneCloses() {
        ChannelHarness.Conn c = joinedToChangesOfT();
        String fresh = h.tokens.ttl(Duration.ofHours(2)).authenticated(FrontFixture.PROJECT, "user-1");
        c.send("[\"1\",\"2\",\"realtime:db\",\"access_token\",{\"access_token\":\"" + fresh + "\"}]");
        assertThat(c.next()).isNull();
        assertThat(h.registry.puts).hasSize(2);
        assertThat(h.registry.puts.get(1).role()).isEqualTo("authenticated");
        assertThat(h.registry.puts.get(1).subId())
                .isEqualTo(h.registry.puts.get(0).subId());
        c.send("[\"1\",\"3\",\"realtime:db\",\"access_token\",{\"access_token\":\"nope\"}]");
        JsonNode system = c.next();
        assertThat(system.get(3).asText()).isEqualTo("system");
        assertThat(system.get(4).get("message").asText()).isEqualTo("The token provided is not a valid JWT");
        assertThat(c.next().get(3).asText()).isEqualTo("phx_close");
        assertThat(h.registry.live).isEmpty();
        c.close();
    }

    @Test
    void cdcStatusFlipsReachPostgresChannels() {
        ChannelHarness.Conn c = joinedToChangesOfT();
        h.fanout.onCdcStatus(new CdcStatus("w1", false, "slot lost", null, null, 0));
        h.fanout.onCdcStatus(new CdcStatus("w1", false, "slot lost", null, null, 0));
        JsonNode down = c.next();
        assertThat(down.get(4).get("status").asText()).isEqualTo("error");
        assertThat(down.get(4).get("message").asText()).isEqualTo("slot lost");
        assertThat(c.next()).isNull();
        h.fanout.onCdcStatus(new CdcStatus("w1", true, null, null, null, 0));
        assertThat(c.next().get(4).get("status").asText()).isEqualTo("ok");
        c.close();
    }

    @Test
    void replicationReadyIsToldAtOnceWhileAnActiveWorkerWasHeardFromLately() {
        h.fanout.onCdcStatus(new CdcStatus("w1", true, null, null, null, 0));
        ChannelHarness.Conn c = h.connect(Vsn.V2);
        c.send(join("1", "realtime:room", "{\"broadcast\":{\"replication_ready\":true}}"));
        assertReply(c.next(), "1", "ok");
        assertThat(c.next().get(4).toString())
                .isEqualTo("{\"extension\":\"system\",\"status\":\"ok\","
                        + "\"message\":\"Replication connection established\",\"channel\":\"room\"}");
        // without the option nothing is said
        c.send(join("2", "realtime:other", "{\"broadcast\":{\"self\":true}}"));
        assertReply(c.next(), "2", "ok");
        assertThat(c.next()).isNull();
        c.close();
    }

    @Test
    void replicationReadyWaitsForAFreshActiveStatusAndFailsWhenNoneComesInTime() {
        ChannelHarness.Conn c = h.connect(Vsn.V2);
        c.ch.freezeTime();
        // heard from once, then silent for longer than two heartbeats: a killed worker is not ready
        h.fanout.onCdcStatus(new CdcStatus("w1", true, null, null, null, 0));
        h.clock.advance(CdcHealth.READY_STATUS_AGE.plusSeconds(1));
        c.send(join("1", "realtime:a", "{\"broadcast\":{\"replication_ready\":true}}"));
        assertReply(c.next(), "1", "ok");
        assertThat(c.next()).isNull();
        // a status arrives within the wait: ok at the next check
        h.fanout.onCdcStatus(new CdcStatus("w1", true, null, null, null, 0));
        c.ch.advanceTimeBy(300, java.util.concurrent.TimeUnit.MILLISECONDS);
        c.ch.runScheduledPendingTasks();
        JsonNode ok = c.next();
        assertThat(ok.get(4).get("status").asText()).isEqualTo("ok");
        assertThat(ok.get(4).get("message").asText()).isEqualTo(Reasons.REPLICATION_READY);

        // an inactive worker: error once the wait (15 s in the harness) ran out, naming why
        h.fanout.onCdcStatus(new CdcStatus("w1", false, "SlotLost: gone", null, null, 0));
        c.drain();
        c.send(join("2", "realtime:b", "{\"broadcast\":{\"replication_ready\":true}}"));
        assertReply(c.next(), "2", "ok");
        for (int i = 0; i < 61; i++) {
            h.clock.advance(Duration.ofMillis(250));
            c.ch.advanceTimeBy(250, java.util.concurrent.TimeUnit.MILLISECONDS);
            c.ch.runScheduledPendingTasks();
        }
        JsonNode error = c.next();
        assertThat(error.get(4).get("extension").asText()).isEqualTo("system");
        assertThat(error.get(4).get("status").asText()).isEqualTo("error");
        assertThat(error.get(4).get("message").asText())
                .isEqualTo("ReplicationNotReady: Replication connection not established within 15000 ms"
                        + " (SlotLost: gone)");
        assertThat(c.next()).isNull();
        c.close();
    }

    @Test
    void malformedFrameWithRefGetsAnErrorAndTheSocketStays() {
        ChannelHarness.Conn c = h.connect(Vsn.V2);
        c.send("[\"1\",\"4\",\"realtime:a\",17,{}]");
        JsonNode reply = c.next();
        assertReply(reply, "4", "error");
        assertThat(reason(reply)).startsWith("MalformedMessage");
        c.send("garbage");
        assertThat(c.next()).isNull();
        assertThat(c.ch.isActive()).isTrue();
        c.close();
    }

    private JsonNode readTree(String s) {
        try {
            return h.mapper.readTree(s);
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    private static byte[] kind3(String joinRef, String ref, String topic, String event, String jsonPayload) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(new byte[] {
            3, (byte) joinRef.length(), (byte) ref.length(), (byte) topic.length(), (byte) event.length(), 0, 1
        });
        for (String s : new String[] {joinRef, ref, topic, event, jsonPayload}) {
            out.writeBytes(s.getBytes(StandardCharsets.UTF_8));
        }
        return out.toByteArray();
    }

    @Test
    void theEventLimitIsPerSecondNotPerConnectionLifetime() {
        ChannelHarness.Conn c = h.connect(Vsn.V2);
        c.send(join("1", "realtime:room", "{\"broadcast\":{\"self\":false}}"));
        assertReply(c.next(), "1", "ok");
        String broadcast =
                "[\"1\",null,\"realtime:room\",\"broadcast\",{\"type\":\"broadcast\",\"event\":\"e\",\"payload\":{}}]";
        // 100 events/s (the harness limit) for five seconds: 500 events, none refused. The window
        // used to start at Long.MIN_VALUE and never end, so the 101st event of the connection's life closed it.
        for (int second = 0; second < 5; second++) {
            for (int i = 0; i < 100; i++) {
                c.send(broadcast);
            }
            assertThat(c.next()).as("second " + second).isNull();
            h.clock.advance(Duration.ofSeconds(1));
        }
        assertThat(h.publisher.published).hasSize(500);
        for (int i = 0; i < 101; i++) {
            c.send(broadcast);
        }
        assertThat(c.next().toString()).contains(Reasons.TOO_MANY_MESSAGES);
        c.close();
    }
}
