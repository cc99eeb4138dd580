package dev.aura.realtime.front.transport;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.common.wire.ChannelAccess;
import dev.aura.realtime.common.wire.ProjectLimits;
import dev.aura.realtime.common.wire.WireJson;
import dev.aura.realtime.front.broadcast.RestBroadcasts;
import dev.aura.realtime.front.fanout.ChannelKeys;
import dev.aura.realtime.front.protocol.Reasons;
import dev.aura.realtime.front.protocol.Vsn;
import dev.aura.realtime.front.relay.ChannelAccessClient;
import dev.aura.realtime.front.testing.ChannelHarness;
import dev.aura.realtime.front.testing.FrontFixture;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * REST broadcast through the whole HTTP pipeline of {@link FrontInitializer}, in memory
 * (docs/design.md H3, protocol.md section 9): the two endpoints as realtime-js calls them, their
 * authorisation, limits and error codes, with a fake cdc-worker answering the private checks. The
 * harness allows payloads of 64 bytes and 100 messages per second.
 */
class RestBroadcastEndpointTest {
    private static final String BATCH = "/realtime/v1/api/broadcast";
    private final ChannelHarness h = new ChannelHarness();
    private final TransportContext context = h.transport();
    private final List<EmbeddedChannel> sockets = new ArrayList<>();
    private final List<ChannelHarness.Conn> conns = new ArrayList<>();
    private final String anon = h.token(Duration.ofHours(1));

    @AfterEach
    void close() {
        sockets.forEach(EmbeddedChannel::finishAndReleaseAll);
        conns.forEach(ChannelHarness.Conn::close);
    }

    /** One HTTP answer: status code, headers (lower-case names) and body. */
    record Response(int status, String head, String body) {
        JsonNode json() {
            try {
                return WireJson.mapper().readTree(body);
            } catch (IOException e) {
                throw new AssertionError(body, e);
            }
        }

        String error() {
            return json().path("error").asText();
        }
    }

    private Response request(String method, String path, byte[] body, String... headers) {
        EmbeddedChannel socket = new EmbeddedChannel(new FrontInitializer(context, new AtomicBoolean()));
        sockets.add(socket);
        StringBuilder head = new StringBuilder(method + " " + path + " HTTP/1.1\r\nHost: test\r\n");
        for (String header : headers) {
            head.append(header).append("\r\n");
        }
        head.append("Content-Length: ").append(body.length).append("\r\n\r\n");
        socket.writeInbound(Unpooled.wrappedBuffer(head.toString().getBytes(StandardCharsets.UTF_8), body));
        socket.runPendingTasks();
        StringBuilder out = new StringBuilder();
        for (ByteBuf b = socket.readOutbound(); b != null; b = socket.readOutbound()) {
            out.append(b.toString(StandardCharsets.UTF_8));
            b.release();
        }
        String text = out.toString();
        int split = text.indexOf("\r\n\r\n");
        assertThat(split).as("an HTTP answer: " + text).isPositive();
        return new Response(
                Integer.parseInt(text.substring(9, 12)),
                text.substring(0, split).toLowerCase(),
                text.substring(split + 4));
    }

    private Response post(String path, String body, String... headers) {
        return request("POST", path, body.getBytes(StandardCharsets.UTF_8), headers);
    }

    private Response postAsAnon(String path, String body) {
        return post(path, body, "apikey: " + anon, "Content-Type: application/json");
    }

    private ChannelHarness.Conn joined(String topic, String config) {
        ChannelHarness.Conn c = h.connect(Vsn.V1);
        conns.add(c);
        c.send("{\"topic\":\"realtime:" + topic + "\",\"event\":\"phx_join\",\"payload\":{\"config\":" + config
                + "},\"ref\":\"1\",\"join_ref\":\"1\"}");
        assertThat(c.next().path("payload").path("status").asText()).isEqualTo("ok");
        return c;
    }

    private static ChannelAccess.Reply writable(boolean allowed) {
        return new ChannelAccess.Reply(null, false, true, true, allowed, null, List.of(), false);
    }

    @Test
    void aBatchOfPublicMessagesIs202AndReachesLocalMembersAndTheOtherReplicas() {
        ChannelHarness.Conn member = joined("news", "{}");
        Response r = postAsAnon(
                BATCH,
                "{\"messages\":[{\"topic\":\"news\",\"event\":\"e1\",\"payload\":{\"a\":1}},"
                        + "{\"topic\":\"realtime:news\",\"event\":\"e2\",\"payload\":{\"a\":2},\"private\":false}]}");

        assertThat(r.status()).isEqualTo(202);
        assertThat(r.body()).isEmpty();
        assertThat(r.head()).contains("access-control-allow-origin: *");
        List<JsonNode> got = member.drain();
        assertThat(got)
                .extracting(f -> f.path("payload").path("event").asText())
                .containsExactly("e1", "e2");
        assertThat(got.get(0).path("payload").path("payload").toString()).isEqualTo("{\"a\":1}");
        assertThat(h.publisher.published).extracting(p -> p.channel()).containsExactly("news", "news");
    }

    @Test
    void httpSendToAPrivateTopicNeedsTheWritePolicyUnderTheBearersClaims() {
        ChannelHarness.Conn privateMember = joined("room:1", "{\"private\":true}");
        ChannelHarness.Conn publicMember = joined("room:1", "{}");
        String user = h.tokens.authenticated(FrontFixture.PROJECT, "user-7");
        h.access = r -> writable(false);
        String path = BATCH + "/room%3A1/events/moved?private=true";

        Response refused = post(path, "{\"x\":1}", "apikey: " + anon, "Authorization: Bearer " + user);
        assertThat(refused.status()).isEqualTo(403);
        assertThat(refused.error())
                .isEqualTo("Unauthorized: You do not have permissions to write to this Channel topic: room:1");
        ChannelAccess.Request asked = h.accessAsked.get(h.accessAsked.size() - 1);
        assertThat(asked.op()).isEqualTo(ChannelAccess.OP_WRITE);
        assertThat(asked.topic()).isEqualTo("room:1");
        assertThat(asked.role()).isEqualTo("authenticated");
        assertThat(asked.claims()).contains("user-7");

        h.access = r -> writable(true);
        assertThat(post(path, "{\"x\":2}", "apikey: " + anon, "Authorization: Bearer " + user)
                        .status())
                .isEqualTo(202);
        assertThat(privateMember.drain())
                .extracting(f -> f.path("payload").path("event").asText())
                .containsExactly("moved");
        assertThat(h.publisher.published).extracting(p -> p.channel()).containsExactly(ChannelKeys.of("room:1", true));
        assertThat(publicMember.next())
                .as("the public channel of the name gets nothing")
                .isNull();
    }

    @Test
    void anOctetStreamBodyIsABinaryBroadcast() {
        Response r = request(
                "POST",
                BATCH + "/bin/events/raw",
                new byte[] {0, 1, 2, (byte) 0xFF},
                "apikey: " + anon,
                "Content-Type: application/octet-stream");
        assertThat(r.status()).isEqualTo(202);
        assertThat(h.publisher.published.get(0).message().json()).isFalse();
        assertThat(h.publisher.published.get(0).message().payload()).containsExactly(0, 1, 2, 0xFF);
    }

    @Test
    void tokensAreCheckedAs401WithTheConnectErrors() {
        assertThat(post(BATCH, "{}").error()).isEqualTo("API key is missing");
        assertThat(post(BATCH, "{}", "apikey: nope").status()).isEqualTo(401);
        Response expired = post(BATCH, "{}", "apikey: " + h.token(Duration.ofSeconds(-5)));
        assertThat(expired.status()).isEqualTo(401);
        assertThat(expired.error()).as("as the connect error").isEqualTo("Token has expired 5 seconds ago");
        String otherProject = h.tokens.authenticated("00000000-0000-0000-0000-000000000001", "u");
        Response mismatch = post(BATCH, "{}", "apikey: " + anon, "Authorization: Bearer " + otherProject);
        assertThat(mismatch.status()).isEqualTo(401);
        assertThat(mismatch.error())
                .isEqualTo("InvalidJWTToken: The access token belongs to another project than the API key");
        assertThat(h.publisher.published).isEmpty();
    }

    @Test
    void malformedRequestsAre400WithAReasonAndSendNothing() {
        assertThat(postAsAnon(BATCH, "{not json").status()).isEqualTo(400);
        assertThat(postAsAnon(BATCH, "{\"messages\":{}}").status()).isEqualTo(400);
        assertThat(postAsAnon(BATCH, "{\"messages\":[]}").status()).isEqualTo(400);
        assertThat(postAsAnon(BATCH, "{\"messages\":[{\"topic\":1,\"event\":\"e\"}]}")
                        .error())
                .isEqualTo("every message needs a string topic and a string event");
        assertThat(postAsAnon(BATCH, "{\"messages\":[{\"topic\":\"a\\u0000b\",\"event\":\"e\"}]}")
                        .error())
                .isEqualTo(Reasons.TOPIC_NAME_INVALID);
        assertThat(postAsAnon(BATCH, "{\"messages\":[{\"topic\":\"\",\"event\":\"e\"}]}")
                        .error())
                .isEqualTo(Reasons.TOPIC_NAME_REQUIRED);
        assertThat(postAsAnon(BATCH + "/t/events/e", "{oops").status()).isEqualTo(400);
        assertThat(postAsAnon(BATCH + "/t/events/e?persist=true", "{}").error())
                .as("persist needs a private channel")
                .isEqualTo("persist needs a private channel");
        assertThat(postAsAnon(BATCH + "/t/nope/e", "{}").status()).isEqualTo(404);
        assertThat(request("GET", BATCH, new byte[0], "apikey: " + anon).status())
                .isEqualTo(405);
        assertThat(h.publisher.published).isEmpty();
    }

    @Test
    void sizesAndRatesAre413And429() {
        Response big = postAsAnon(BATCH + "/t/events/e", "{\"b\":\"" + "x".repeat(100) + "\"}");
        assertThat(big.status()).isEqualTo(413);
        assertThat(big.error()).isEqualTo(Reasons.payloadTooLarge(64));

        StringBuilder many = new StringBuilder("{\"messages\":[");
        for (int i = 0; i <= RestBroadcasts.MAX_MESSAGES; i++) {
            many.append(i == 0 ? "" : ",").append("{\"topic\":\"t\",\"event\":\"e\"}");
        }
        assertThat(postAsAnon(BATCH, many.append("]}").toString()).status()).isEqualTo(413);

        Response huge = postAsAnon(BATCH, "x".repeat(FrontInitializer.MAX_HTTP_REQUEST_BYTES + 1));
        assertThat(huge.status()).isEqualTo(413);
        assertThat(huge.error()).startsWith("Payload Too Large");

        // the project's messages per second (across replicas) count REST messages too
        h.overrides.rows.put(FrontFixture.PROJECT, new ProjectLimits(null, 100, null, null, null, null, null));
        StringBuilder sixty = new StringBuilder("{\"messages\":[");
        for (int i = 0; i < 60; i++) {
            sixty.append(i == 0 ? "" : ",").append("{\"topic\":\"t\",\"event\":\"e\"}");
        }
        String batch = sixty.append("]}").toString();
        assertThat(postAsAnon(BATCH, batch).status()).isEqualTo(202);
        Response limited = postAsAnon(BATCH, batch);
        assertThat(limited.status()).isEqualTo(429);
        assertThat(limited.error()).isEqualTo(Reasons.PROJECT_TOO_MANY_MESSAGES);
        assertThat(h.publisher.published).as("the refused request sent nothing").hasSize(60);
    }

    @Test
    void privateOnlyRefusesPublicMessagesAndNoAnswerFromACdcWorkerIs503ForPrivateOnes() {
        h.access = r -> new ChannelAccess.Reply(null, true, true, true, true, null, List.of(), false);
        Response publicOne = postAsAnon(BATCH + "/open/events/e", "{}");
        assertThat(publicOne.status()).isEqualTo(403);
        assertThat(publicOne.error()).isEqualTo(Reasons.PRIVATE_ONLY);
        assertThat(postAsAnon(BATCH + "/closed/events/e?private=true", "{}").status())
                .isEqualTo(202);

        h.access = r -> ChannelAccess.Reply.failed(ChannelAccessClient.UNAVAILABLE);
        Response unavailable = postAsAnon(BATCH + "/closed/events/e?private=true", "{}");
        assertThat(unavailable.status()).isEqualTo(503);
        assertThat(unavailable.error()).isEqualTo(ChannelAccessClient.UNAVAILABLE);
    }

    @Test
    void persistStoresThroughTheCdcWorkerAndItsRefusalsKeepTheirCodes() {
        Response stored = postAsAnon(BATCH + "/log/events/note?private=true&persist%5Bttl%5D=60", "{\"n\":1}");
        assertThat(stored.status()).isEqualTo(202);
        ChannelAccess.Request asked = h.accessAsked.get(h.accessAsked.size() - 1);
        assertThat(asked.op()).isEqualTo(ChannelAccess.OP_PERSIST);
        assertThat(asked.event()).isEqualTo("note");
        assertThat(asked.payload().toString()).isEqualTo("{\"n\":1}");
        assertThat(asked.ttlMs()).as("persist[ttl] in seconds").isEqualTo(60_000);
        assertThat(h.publisher.published).as("delivered from the database").isEmpty();
        int askedBefore = h.accessAsked.size();
        Response badTtl = postAsAnon(BATCH + "/log/events/note?private=true&persist%5Bttl%5D=-5", "{}");
        assertThat(badTtl.status()).isEqualTo(400);
        assertThat(badTtl.error()).isEqualTo("MalformedMessage: persist.ttl must be a positive number of seconds");
        assertThat(h.accessAsked).as("refused before the worker is asked").hasSize(askedBefore);
        postAsAnon(BATCH + "/log/events/note?private=true&persist=true", "{}");
        assertThat(h.accessAsked.get(h.accessAsked.size() - 1).ttlMs()).isZero();

        h.access = r -> ChannelAccess.Reply.failed(Reasons.cannotWrite("log"));
        assertThat(postAsAnon(BATCH + "/log/events/note?private=true&persist=true", "{}")
                        .status())
                .isEqualTo(403);
        h.access = r -> ChannelAccess.Reply.failed("PayloadTooLarge: Payload size exceeds the limit of 262144 bytes");
        assertThat(postAsAnon(BATCH + "/log/events/note?private=true&persist=true", "{}")
                        .status())
                .isEqualTo(413);
    }

    @Test
    void aPersistedOctetStreamBodyIsStoredAsBinary() {
        Response r = request(
                "POST",
                BATCH + "/log/events/raw?private=true&persist=true",
                new byte[] {0, 1, (byte) 0xFF},
                "apikey: " + anon,
                "Content-Type: application/octet-stream");
        assertThat(r.status()).isEqualTo(202);
        ChannelAccess.Request asked = h.accessAsked.get(h.accessAsked.size() - 1);
        assertThat(asked.op()).isEqualTo(ChannelAccess.OP_PERSIST_BINARY);
        assertThat(asked.payload()).isNull();
        assertThat(asked.binaryPayload()).containsExactly(0, 1, 0xFF);
        assertThat(h.publisher.published).as("delivered from the database").isEmpty();
    }

    @Test
    void aBrowsersPreflightIsAnsweredForAnyOriginWithTheHeadersItAsksFor() {
        Response r = request(
                "OPTIONS",
                BATCH + "/room/events/e",
                new byte[0],
                "Origin: https://app.example",
                "Access-Control-Request-Method: POST",
                "Access-Control-Request-Headers: apikey, authorization, content-type, x-client-info");
        assertThat(r.status()).isEqualTo(204);
        assertThat(r.head())
                .contains("access-control-allow-origin: *")
                .contains("access-control-allow-methods: post, options")
                .contains("access-control-allow-headers: apikey, authorization, content-type, x-client-info");
    }

    @Test
    void theRootPathIsServedToo() {
        assertThat(postAsAnon("/api/broadcast", "{\"messages\":[{\"topic\":\"t\",\"event\":\"e\"}]}")
                        .status())
                .isEqualTo(202);
    }
}
