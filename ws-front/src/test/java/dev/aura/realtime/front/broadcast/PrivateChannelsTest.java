package dev.aura.realtime.front.broadcast;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.common.wire.ChannelAccess;
import dev.aura.realtime.common.wire.DbBroadcast;
import dev.aura.realtime.front.channel.ChannelLayer;
import dev.aura.realtime.front.fanout.ChannelKeys;
import dev.aura.realtime.front.presence.PresenceExtension;
import dev.aura.realtime.front.presence.PresenceMember;
import dev.aura.realtime.front.protocol.PhoenixMessage;
import dev.aura.realtime.front.protocol.Reasons;
import dev.aura.realtime.front.protocol.Vsn;
import dev.aura.realtime.front.relay.ChannelAccessClient;
import dev.aura.realtime.front.testing.ChannelHarness;
import dev.aura.realtime.front.testing.FrontFixture;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Private channels in the channel layer (docs/design.md H1, H2), in memory: the read check at
 * join, {@code private_only}, the write check of the first broadcast or track, the re-check on a
 * new {@code access_token}, replay and persist through the channel-access seam (a fake cdc-worker
 * answering {@link ChannelAccess} requests), and the separation of public and private channels.
 * All connections speak vsn 1.0.0, so every frame is a JSON object.
 */
class PrivateChannelsTest {
    private static final String ROOM = "realtime:room";
    private final ChannelHarness h = new ChannelHarness();
    private final List<ChannelHarness.Conn> conns = new CopyOnWriteArrayList<>();

    @AfterEach
    void closeAll() {
        conns.forEach(ChannelHarness.Conn::close);
    }

    private ChannelHarness.Conn connect() {
        ChannelHarness.Conn c = h.connect(Vsn.V1);
        conns.add(c);
        return c;
    }

    private static String frame(String joinRef, String ref, String topic, String event, String payload) {
        return "{\"topic\":\"" + topic + "\",\"event\":\"" + event + "\",\"payload\":" + payload + ",\"ref\":"
                + (ref == null ? "null" : "\"" + ref + "\"") + ",\"join_ref\":\"" + joinRef + "\"}";
    }

    private static String join(String topic, String config) {
        return frame("1", "1", topic, "phx_join", "{\"config\":" + config + "}");
    }

    private static String broadcast(String ref, String event, String payload) {
        return frame(
                "1",
                ref,
                ROOM,
                "broadcast",
                "{\"type\":\"broadcast\",\"event\":\"" + event + "\",\"payload\":" + payload + "}");
    }

    private static String status(JsonNode reply) {
        return reply.path("payload").path("status").asText();
    }

    private static String reason(JsonNode reply) {
        return reply.path("payload").path("response").path("reason").asText();
    }

    private static ChannelAccess.Reply readable(boolean broadcast, boolean presence) {
        return ChannelAccess.Reply.read(false, broadcast, presence);
    }

    private static ChannelAccess.Reply writable(boolean allowed) {
        return ChannelAccess.Reply.write(false, allowed);
    }

    private List<ChannelAccess.Request> asked(String op) {
        return h.accessAsked.stream().filter(r -> op.equals(r.op())).toList();
    }

    /** A connection joined to the private {@code realtime:room} with {@code config}, its replies drained. */
    private ChannelHarness.Conn joinedPrivately(String config) {
        ChannelHarness.Conn c = connect();
        c.send(join(ROOM, "{\"private\":true" + (config.isEmpty() ? "" : "," + config) + "}"));
        assertThat(status(c.next())).isEqualTo("ok");
        c.drain();
        return c;
    }

    @Test
    void aPrivateJoinRunsTheReadCheckWithTheJoinsClaimsAndIsRefusedWithSupabasesWords() {
        h.access = r -> readable(false, false);
        ChannelHarness.Conn c = connect();
        String user = h.tokens.authenticated(FrontFixture.PROJECT, "user-1");
        c.send(frame("1", "1", ROOM, "phx_join", "{\"config\":{\"private\":true},\"access_token\":\"" + user + "\"}"));

        JsonNode reply = c.next();
        assertThat(status(reply)).isEqualTo("error");
        assertThat(reason(reply))
                .isEqualTo("Unauthorized: You do not have permissions to read from this Channel topic: room");
        ChannelAccess.Request asked = asked(ChannelAccess.OP_READ).get(0);
        assertThat(asked.projectId()).isEqualTo(FrontFixture.PROJECT);
        assertThat(asked.topic()).isEqualTo("room");
        assertThat(asked.role()).isEqualTo("authenticated");
        assertThat(asked.claims()).contains("\"sub\":\"user-1\"");
        assertThat(h.metrics.channels()).isZero();
    }

    @Test
    void aReadCheckThatCouldNotRunDeniesTheJoin() {
        h.access = r -> ChannelAccess.Reply.failed(ChannelAccessClient.UNAVAILABLE);
        ChannelHarness.Conn c = connect();
        c.send(join(ROOM, "{\"private\":true}"));
        JsonNode reply = c.next();
        assertThat(status(reply)).isEqualTo("error");
        assertThat(reason(reply)).isEqualTo(ChannelAccessClient.UNAVAILABLE);
    }

    @Test
    void aTopicWithNulIsRefusedBeforeAnyCheck() {
        ChannelHarness.Conn c = connect();
        c.send(join("realtime:a\\u0000private:room", "{\"private\":true}"));
        assertThat(reason(c.next())).isEqualTo(Reasons.TOPIC_NAME_INVALID);
        assertThat(h.accessAsked).isEmpty();
    }

    @Test
    void privateOnlyRefusesPublicJoinsAskingAtMostOncePerTtlAndAdmitsPrivateOnes() {
        h.access = r -> ChannelAccess.Reply.read(true, true, true);
        ChannelHarness.Conn c = connect();
        c.send(join("realtime:public-1", "{}"));
        assertThat(reason(c.next())).isEqualTo("PrivateOnly: This project only allows private channels");
        c.send(join("realtime:public-2", "{}"));
        assertThat(reason(c.next())).isEqualTo(Reasons.PRIVATE_ONLY);
        assertThat(asked(ChannelAccess.OP_SETTINGS)).hasSize(1);

        c.send(join(ROOM, "{\"private\":true}"));
        assertThat(status(c.next())).isEqualTo("ok");

        // after the TTL the cached answer still decides at once while a new one is asked
        h.access = r -> ChannelAccess.Reply.read(false, true, true);
        h.clock.advance(Duration.ofMillis(PrivateOnlyCache.TTL_MS + 1));
        c.send(join("realtime:public-3", "{}"));
        assertThat(reason(c.next())).isEqualTo(Reasons.PRIVATE_ONLY);
        c.send(join("realtime:public-4", "{}"));
        assertThat(status(c.next())).isEqualTo("ok");
    }

    @Test
    void withNoCdcWorkerAnsweringPublicJoinsAreAdmitted() {
        h.access = r -> ChannelAccess.Reply.failed(ChannelAccessClient.UNAVAILABLE);
        ChannelHarness.Conn c = connect();
        c.send(join("realtime:lobby", "{}"));
        assertThat(status(c.next())).isEqualTo("ok");
    }

    @Test
    void publicAndPrivateChannelsOfOneNameShareNothing() {
        ChannelHarness.Conn priv = joinedPrivately("\"broadcast\":{\"self\":true}");
        ChannelHarness.Conn pub = connect();
        pub.send(join(ROOM, "{\"broadcast\":{\"self\":true}}"));
        pub.drain();

        pub.send(broadcast(null, "to-public", "{}"));
        assertThat(pub.next().path("payload").path("event").asText()).isEqualTo("to-public");
        assertThat(priv.next()).isNull();

        priv.send(broadcast(null, "to-private", "{}"));
        assertThat(priv.next().path("payload").path("event").asText()).isEqualTo("to-private");
        assertThat(pub.next()).isNull();
        assertThat(h.publisher.published)
                .extracting(p -> p.channel())
                .containsExactly("room", ChannelKeys.of("room", true));
    }

    @Test
    void aRowFromTheDatabaseReachesTheChannelItsPrivateFlagNamesAndOnlyMembersThatReadBroadcasts() {
        ChannelHarness.Conn reader = joinedPrivately("");
        h.access = r -> readable(false, true);
        ChannelHarness.Conn presenceOnly = joinedPrivately("");
        ChannelHarness.Conn pub = connect();
        pub.send(join(ROOM, "{}"));
        pub.drain();

        String id = "0b7f6c1e-2f6a-4d0e-9c7a-1d2e3f4a5b6c";
        h.fanout.onDbBroadcast(
                FrontFixture.PROJECT, new DbBroadcast(id, "room", "INSERT", h.mapper.createObjectNode(), true));
        JsonNode got = reader.next();
        assertThat(got.path("event").asText()).isEqualTo("broadcast");
        assertThat(got.path("payload").path("event").asText()).isEqualTo("INSERT");
        assertThat(got.path("payload").path("meta").path("id").asText()).isEqualTo(id);
        assertThat(presenceOnly.next()).isNull();
        assertThat(pub.next()).isNull();

        h.fanout.onDbBroadcast(
                FrontFixture.PROJECT, new DbBroadcast(id, "room", "public", h.mapper.createObjectNode(), false));
        assertThat(pub.next().path("payload").path("event").asText()).isEqualTo("public");
        assertThat(reader.next()).isNull();
    }

    @Test
    void theFirstBroadcastRunsTheWriteCheckOnceAndTheOnesArrivingMeanwhileFollowInOrder() {
        ChannelHarness.Conn sender = joinedPrivately("\"broadcast\":{\"ack\":true}");
        h.access = r -> ChannelAccess.OP_WRITE.equals(r.op()) ? null : readable(true, true);
        sender.send(broadcast("2", "a", "{}"));
        sender.send(broadcast("3", "b", "{}"));
        sender.send(broadcast("4", "c", "{}"));
        assertThat(asked(ChannelAccess.OP_WRITE)).hasSize(1);
        assertThat(asked(ChannelAccess.OP_WRITE).get(0).extension()).isEqualTo("broadcast");
        assertThat(sender.next()).isNull();
        assertThat(h.publisher.published).isEmpty();

        h.accessPending.get(0).complete(writable(true));
        assertThat(sender.drain()).extracting(f -> f.path("ref").asText()).containsExactly("2", "3", "4");
        assertThat(h.publisher.published).extracting(p -> p.message().event()).containsExactly("a", "b", "c");

        sender.send(broadcast("5", "d", "{}"));
        assertThat(status(sender.next())).isEqualTo("ok");
        assertThat(asked(ChannelAccess.OP_WRITE)).as("cached for the channel").hasSize(1);
    }

    @Test
    void aRefusedWriteIsAnErrorReplyWithAckAndASystemErrorWithout() {
        h.access = r -> ChannelAccess.OP_WRITE.equals(r.op()) ? writable(false) : readable(true, true);
        ChannelHarness.Conn acked = joinedPrivately("\"broadcast\":{\"ack\":true}");
        acked.send(broadcast("2", "a", "{}"));
        JsonNode reply = acked.next();
        assertThat(status(reply)).isEqualTo("error");
        assertThat(reason(reply))
                .isEqualTo("Unauthorized: You do not have permissions to write to this Channel topic: room");

        ChannelHarness.Conn silent = joinedPrivately("");
        silent.send(broadcast(null, "a", "{}"));
        JsonNode system = silent.next();
        assertThat(system.path("event").asText()).isEqualTo("system");
        assertThat(system.path("payload").path("message").asText()).isEqualTo(Reasons.cannotWrite("room"));
        assertThat(h.publisher.published).isEmpty();
    }

    @Test
    void aTrackRunsThePresenceWriteCheck() {
        h.access = r -> ChannelAccess.OP_WRITE.equals(r.op()) ? writable(false) : readable(true, true);
        ChannelHarness.Conn c = joinedPrivately("");
        c.send(frame("1", "2", ROOM, "presence", "{\"type\":\"presence\",\"event\":\"track\",\"payload\":{}}"));
        assertThat(reason(c.next())).isEqualTo(Reasons.cannotWrite("room"));
        assertThat(asked(ChannelAccess.OP_WRITE).get(0).extension()).isEqualTo("presence");
    }

    @Test
    void eventsWaitingForTheWriteCheckAreBoundedInBytes() {
        ChannelHarness.Conn c = joinedPrivately("\"broadcast\":{\"ack\":true}");
        h.access = r -> ChannelAccess.OP_WRITE.equals(r.op()) ? null : readable(true, true);
        String payload = "\"" + "x".repeat(60) + "\"";
        // the harness's payload limit is 64 bytes: 1 MiB of waiting takes about 17,000 events,
        // sent within the harness's 100 events per second by moving the clock
        int sent = 0;
        JsonNode refusal = null;
        while (refusal == null && sent < 40_000) {
            if (sent % 90 == 0) {
                h.clock.advance(Duration.ofSeconds(1));
            }
            c.send(broadcast(Integer.toString(++sent), "e", payload));
            refusal = c.next();
        }
        assertThat(refusal).isNotNull();
        assertThat(reason(refusal)).isEqualTo(Reasons.WRITE_CHECK_PENDING);
        assertThat((long) sent * 62).isGreaterThan(PrivateChannels.MAX_WAITING_BYTES);
    }

    @Test
    void aNewAccessTokenForgetsTheWriteCheckAndClosesAChannelThatLostItsRead() {
        ChannelHarness.Conn c = joinedPrivately("\"broadcast\":{\"ack\":true}");
        c.send(broadcast("2", "a", "{}"));
        assertThat(status(c.next())).isEqualTo("ok");

        c.send(frame(
                "1",
                "3",
                ROOM,
                "access_token",
                "{\"access_token\":\"" + h.tokens.authenticated(FrontFixture.PROJECT, "user-2") + "\"}"));
        assertThat(asked(ChannelAccess.OP_READ)).hasSize(2);
        assertThat(asked(ChannelAccess.OP_READ).get(1).claims()).contains("user-2");
        c.send(broadcast("4", "b", "{}"));
        assertThat(status(c.next())).isEqualTo("ok");
        assertThat(asked(ChannelAccess.OP_WRITE))
                .as("asked again under the new claims")
                .hasSize(2);

        h.access = r -> readable(false, false);
        c.send(frame(
                "1",
                "5",
                ROOM,
                "access_token",
                "{\"access_token\":\"" + h.tokens.authenticated(FrontFixture.PROJECT, "user-3") + "\"}"));
        JsonNode system = c.next();
        assertThat(system.path("event").asText()).isEqualTo("system");
        assertThat(system.path("payload").path("message").asText()).isEqualTo(Reasons.cannotRead("room"));
        assertThat(c.next().path("event").asText()).isEqualTo("phx_close");
        assertThat(h.metrics.channels()).isZero();
    }

    @Test
    void replayOfAPrivateChannelComesFromTheMessagesTableAfterTheOkReplyMarkedReplayed() {
        h.access = r -> ChannelAccess.OP_REPLAY.equals(r.op())
                ? ChannelAccess.Reply.replayed(
                        false,
                        List.of(
                                new ChannelAccess.Message("id-1", "first", h.mapper.valueToTree(Map.of("n", 1)), 1),
                                new ChannelAccess.Message("id-2", "second", h.mapper.valueToTree(Map.of("n", 2)), 2)),
                        true)
                : readable(true, true);
        ChannelHarness.Conn c = connect();
        c.send(join(ROOM, "{\"private\":true,\"broadcast\":{\"replay\":{\"since\":1000,\"limit\":100}}}"));

        assertThat(status(c.next())).isEqualTo("ok");
        JsonNode first = c.next();
        assertThat(first.path("payload").path("event").asText()).isEqualTo("first");
        assertThat(first.path("payload").path("meta").path("replayed").asBoolean())
                .isTrue();
        assertThat(first.path("payload").path("meta").path("id").asText()).isEqualTo("id-1");
        assertThat(c.next().path("payload").path("event").asText()).isEqualTo("second");
        assertThat(c.next().path("payload").path("message").asText()).isEqualTo(Reasons.REPLAY_TRUNCATED);
        ChannelAccess.Request asked = asked(ChannelAccess.OP_REPLAY).get(0);
        assertThat(asked.sinceMs()).isEqualTo(1000);
        assertThat(asked.limit()).isEqualTo(ChannelAccess.MAX_REPLAY_LIMIT);
    }

    @Test
    void aReplayedBinaryMessageIsLeftOutForAVsn1Member() {
        h.access = r -> ChannelAccess.OP_REPLAY.equals(r.op())
                ? ChannelAccess.Reply.replayed(
                        false,
                        List.of(
                                new ChannelAccess.Message("id-1", "blob", null, 1, new byte[] {0, (byte) 0xff}),
                                new ChannelAccess.Message("id-2", "second", h.mapper.valueToTree(Map.of("n", 2)), 2)),
                        false)
                : readable(true, true);
        ChannelHarness.Conn c = connect();
        c.send(join(ROOM, "{\"private\":true,\"broadcast\":{\"replay\":{\"since\":1000,\"limit\":10}}}"));

        assertThat(status(c.next())).isEqualTo("ok");
        assertThat(c.next().path("payload").path("event").asText()).isEqualTo("second");
    }

    @Test
    void aJoinOnAnExpiredApiKeyWithoutAccessTokenIsRefusedBeforeAnyReplay() {
        h.access = r -> ChannelAccess.OP_REPLAY.equals(r.op())
                ? ChannelAccess.Reply.replayed(
                        false,
                        List.of(new ChannelAccess.Message("id-1", "first", h.mapper.valueToTree(Map.of("n", 1)), 1)),
                        false)
                : readable(true, true);
        ChannelHarness.Conn c = connect(); // apikey valid for one hour
        h.clock.advance(Duration.ofHours(1).plusSeconds(12));
        String replay = "\"broadcast\":{\"replay\":{\"since\":1000,\"limit\":10}}";
        c.send(join(ROOM, "{\"private\":true," + replay + "}"));
        JsonNode refused = c.next();
        assertThat(status(refused)).isEqualTo("error");
        assertThat(reason(refused)).isEqualTo("InvalidJWTToken: Token has expired 12 seconds ago");
        assertThat(c.next()).as("nothing after the refusal").isNull();
        assertThat(asked(ChannelAccess.OP_REPLAY)).as("no history read").isEmpty();
        assertThat(h.metrics.channels()).isZero();
        c.send(frame("2", "2", "realtime:pub", "phx_join", "{\"config\":{" + replay + "}}"));
        assertThat(reason(c.next())).isEqualTo("InvalidJWTToken: Token has expired 12 seconds ago");
        assertThat(c.next()).isNull();

        // the same join with a new access_token is accepted and replays
        c.send(frame(
                "3",
                "3",
                ROOM,
                "phx_join",
                "{\"config\":{\"private\":true," + replay + "},\"access_token\":\""
                        + h.tokens.ttl(Duration.ofHours(1)).authenticated(FrontFixture.PROJECT, "user-3") + "\"}"));
        assertThat(status(c.next())).isEqualTo("ok");
        assertThat(c.next().path("payload").path("event").asText()).isEqualTo("first");
    }

    @Test
    void aPersistedBroadcastIsStoredAndAckedAfterTheInsertAndNeverOnAPublicChannel() {
        ChannelHarness.Conn c = joinedPrivately("\"broadcast\":{\"ack\":true}");
        c.send(frame(
                "1",
                "2",
                ROOM,
                "broadcast",
                "{\"type\":\"broadcast\",\"event\":\"note\",\"payload\":{\"n\":1},\"persist\":true}"));
        assertThat(status(c.next())).isEqualTo("ok");
        ChannelAccess.Request persisted = asked(ChannelAccess.OP_PERSIST).get(0);
        assertThat(persisted.event()).isEqualTo("note");
        assertThat(persisted.payload().toString()).isEqualTo("{\"n\":1}");
        assertThat(h.publisher.published)
                .as("delivered from the database, not relayed")
                .isEmpty();

        h.access = r -> ChannelAccess.OP_PERSIST.equals(r.op())
                ? ChannelAccess.Reply.failed(Reasons.cannotWrite("room"))
                : writable(true);
        c.send(frame(
                "1",
                "3",
                ROOM,
                "broadcast",
                "{\"type\":\"broadcast\",\"event\":\"note\",\"payload\":{},\"persist\":true}"));
        JsonNode refused = c.next();
        assertThat(status(refused)).isEqualTo("error");
        assertThat(refused.path("payload").path("response").path("error").asText())
                .isEqualTo(Reasons.cannotWrite("room"));

        ChannelHarness.Conn pub = connect();
        pub.send(join("realtime:open", "{\"broadcast\":{\"ack\":true}}"));
        pub.drain();
        pub.send(frame(
                "1",
                "2",
                "realtime:open",
                "broadcast",
                "{\"type\":\"broadcast\",\"event\":\"note\",\"payload\":{},\"persist\":true}"));
        assertThat(reason(pub.next())).isEqualTo(Reasons.PERSIST_NEEDS_PRIVATE);
    }

    @Test
    void aMemberWithoutPresenceReadIsJoinedWithPresenceOff() {
        List<Boolean> enabled = new CopyOnWriteArrayList<>();
        PresenceExtension recording = new PresenceExtension() {
            @Override
            public void onJoined(PresenceMember member) {
                enabled.add(member.presence().enabled());
            }

            @Override
            public void onPresence(PresenceMember member, PhoenixMessage.PresencePush push) {}

            @Override
            public void onLeft(PresenceMember member) {}
        };
        ChannelLayer withPresence = h.channels(recording);
        String config = "{\"private\":true,\"presence\":{\"enabled\":true,\"key\":\"k\"}}";
        ChannelHarness.Conn reads = h.connect(Vsn.V1, withPresence);
        conns.add(reads);
        reads.send(join(ROOM, config));
        h.access = r -> readable(true, false);
        ChannelHarness.Conn blind = h.connect(Vsn.V1, withPresence);
        conns.add(blind);
        blind.send(join(ROOM, config));

        assertThat(enabled).containsExactly(true, false);
    }
}
