package dev.aura.realtime.e2e.faults;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import dev.aura.realtime.e2e.E2eStack;
import dev.aura.realtime.testkit.RealtimeJsClient;
import dev.aura.realtime.testkit.Waits;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 9, "Tokens": hostile tokens against the real jars. Each is refused at connect (issue 40:
 * in the protocol, so that browsers see why: the join's error reply and the close frame, 1008,
 * carry {@code <Kind>: <text>}; logged as {@code [ConnectionRefused]} and counted per kind) and at
 * join as {@code access_token} (error reply {@code <Kind>: <text>}). A client of project B with a valid token never receives project
 * A's postgres_changes or broadcasts, whatever it writes in schema, table, filter or topic.
 */
class TokensE2EIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static E2eStack stack;
    private static final String projectB = UUID.randomUUID().toString();

    @BeforeAll
    static void start() {
        stack = E2eStack.startDefault(1);
        stack.createProject(projectB);
        for (String p : List.of(stack.projectId, projectB)) {
            stack.createEnabledTable(p, "t", "(id int PRIMARY KEY, body text)");
        }
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    /** Hostile tokens for project A and the protocol's error for each: {kind, message prefix}. */
    private static Map<String, String[]> hostile() throws Exception {
        String a = stack.projectId;
        Map<String, String[]> m = new LinkedHashMap<>();
        String sig = "Failed to validate JWT signature";
        String malformed = "The token provided is not a valid JWT";
        m.put("wrong signature", new String[] {stack.tokens.signedWithWrongSecret(a), "JwtSignatureError", sig});
        m.put(
                "tampered payload (anon -> service_role)",
                new String[] {stack.tokens.tampered(a), "JwtSignatureError", sig});
        m.put("alg none", new String[] {stack.tokens.algNone(a), "MalformedJWT", malformed});
        m.put("alg RS256 header, HMAC-signed with the HS secret", new String[] {
            hmacWithHeader("RS256", stack.tokens.claims("service_role", a)), "JwtSignatureError", sig
        });
        m.put(
                "genuine RS256 (attacker's own RSA key)",
                new String[] {rs256(stack.tokens.claims("service_role", a)), "JwtSignatureError", sig});
        m.put(
                "HS512 (secret doubled to 64 bytes)",
                new String[] {hs512(stack.tokens.claims("service_role", a)), "JwtSignatureError", sig});
        m.put("alg HS512 header over HMAC-SHA256 with the secret", new String[] {
            hmacWithHeader("HS512", stack.tokens.claims("service_role", a)), "JwtSignatureError", sig
        });
        m.put("no exp", new String[] {
            stack.tokens.withoutExp(a), "InvalidJWTToken", "Fields `role` and `exp` are required in JWT"
        });
        m.put("no role", new String[] {
            stack.tokens.withoutRole(a), "InvalidJWTToken", "Fields `role` and `exp` are required in JWT"
        });
        m.put("no ref", new String[] {
            stack.tokens.withoutRef(a), "InvalidJWTToken", "Field `ref` (the project id) is required in JWT"
        });
        m.put("expired", new String[] {stack.tokens.expired("anon", a), "InvalidJWTToken", "Token has expired "});
        m.put("garbage", new String[] {"not.a.jwt", "MalformedJWT", malformed});
        return m;
    }

    @Test
    void everyHostileTokenIsRefusedAtConnectWithItsReasonInTheProtocolLoggedAndCounted() throws Exception {
        double before = refusals("JwtSignatureError");
        int signatureCases = 0;
        for (Map.Entry<String, String[]> e : hostile().entrySet()) {
            String reason = e.getValue()[1] + ": " + e.getValue()[2];
            assertRefusedInTheProtocol(
                    e.getKey(), "apikey=" + URLEncoder.encode(e.getValue()[0], StandardCharsets.UTF_8), reason);
            signatureCases += e.getValue()[1].equals("JwtSignatureError") ? 1 : 0;
        }
        assertRefusedInTheProtocol("no apikey", "", "API key is missing");
        // the positive control: the same request with a good key is admitted
        assertThat(upgrade("/realtime/v1/websocket?vsn=1.0.0&apikey=" + stack.tokens.anon(stack.projectId)).status)
                .isEqualTo(101);

        assertThat(refusals("JwtSignatureError") - before).isEqualTo(signatureCases);
        assertThat(refusals("ApiKeyMissing")).isPositive();
        assertThat(refusals("InvalidJWTToken")).isPositive();
        assertThat(refusals("MalformedJWT")).isPositive();
        stack.wsFront(0)
                .waitForLog(
                        Pattern.compile(
                                // one line per reason and second: which InvalidJWTToken case was logged varies
                                "\\[ConnectionRefused\\] InvalidJWTToken: .* \\(remote 127\\.0\\.0\\.1, /realtime/v1/websocket\\)"),
                        WAIT);
        stack.wsFront(0)
                .waitForLog(
                        Pattern.compile(
                                "\\[ConnectionRefused\\] ApiKeyMissing: API key is missing \\(remote 127\\.0\\.0\\.1,"),
                        WAIT);
    }

    /**
     * A refused apikey (issue 40): the upgrade is accepted so that the reason reaches a browser
     * (which never sees an HTTP error's body), the join is answered with the reason as its error,
     * and the socket is closed with 1008 (policy violation) and the reason.
     */
    private static void assertRefusedInTheProtocol(String what, String query, String reason) throws Exception {
        try (Ws ws = Ws.openQuery("vsn=1.0.0" + (query.isEmpty() ? "" : "&" + query))) {
            ws.join("realtime:room", "1", changesConfig("public", "t", null), null);
            JsonNode reply = ws.await(f -> "1".equals(f.path("ref").asText())
                    && "phx_reply".equals(f.path("event").asText()));
            assertThat(reply.at("/payload/status").asText())
                    .as(what + ": " + reply)
                    .isEqualTo("error");
            assertThat(reply.at("/payload/response/reason").asText()).as(what).startsWith(reason);
            Waits.until("the close frame of " + what, WAIT, Duration.ofMillis(20), () -> ws.closeCode > 0, () -> "");
            assertThat(ws.closeCode).as(what).isEqualTo(1008);
            assertThat(ws.closeReason).as(what).startsWith(reason);
        }
    }

    private static double refusals(String reason) {
        return stack.http(stack.wsPort(0)).metric("aura_ws_connections_refused_total{reason=\"" + reason + "\"}");
    }

    /**
     * What a realtime-js user sees with an expired apikey (issue 40: it was "transport failure"):
     * a {@code system} error message and the subscribe callback's {@code CHANNEL_ERROR} carry the
     * reason, as for a refused join, and the socket closes with 1008 and the reason.
     */
    @Test
    void realtimeJsShowsWhyItsApiKeyWasRefused() {
        try (RealtimeJsClient js = RealtimeJsClient.start()) {
            js.connect(stack.wsUrl(0), stack.tokens.expired("anon", stack.projectId), "2.0.0", Map.of());
            js.channel("room-1");
            js.onPostgresChanges("room-1", Map.of("event", "*", "schema", "public", "table", "t"));
            js.onSystem("room-1");
            js.subscribe("room-1");
            JsonNode system = js.awaitEvent(
                    e -> "system".equals(e.path("type").asText())
                            && "room-1".equals(e.path("channel").asText()),
                    WAIT);
            assertThat(system.at("/payload/status").asText())
                    .as(system.toString())
                    .isEqualTo("error");
            assertThat(system.at("/payload/message").asText())
                    .matches("InvalidJWTToken: Token has expired \\d+ seconds ago");
            JsonNode status = js.awaitEvent(
                    e -> "status".equals(e.path("type").asText())
                            && "room-1".equals(e.path("channel").asText()),
                    WAIT);
            assertThat(status.path("status").asText()).as(status.toString()).isEqualTo("CHANNEL_ERROR");
            assertThat(status.at("/error/message").asText())
                    .matches("InvalidJWTToken: Token has expired \\d+ seconds ago");
            JsonNode closed = js.awaitEvent(
                    e -> "socket".equals(e.path("type").asText())
                            && "close".equals(e.path("event").asText()),
                    WAIT);
            assertThat(closed.path("code").asInt()).isEqualTo(1008);
            assertThat(closed.path("reason").asText()).matches("InvalidJWTToken: Token has expired \\d+ seconds ago");
        }
    }

    @Test
    void everyHostileTokenIsRefusedAtJoinAsAccessToken() throws Exception {
        Map<String, String[]> cases = hostile();
        cases.put("valid token of another project", new String[] {
            stack.tokens.authenticated(projectB, UUID.randomUUID().toString()),
            "InvalidJWTToken",
            "The access token belongs to another project than the API key"
        });
        try (Ws ws = Ws.open(stack.tokens.anon(stack.projectId))) {
            int i = 0;
            for (Map.Entry<String, String[]> e : cases.entrySet()) {
                String ref = "r" + i++;
                ws.join("realtime:tok-" + i, ref, changesConfig("public", "t", null), e.getValue()[0]);
                JsonNode reply = ws.await(f -> ref.equals(f.path("ref").asText())
                        && "phx_reply".equals(f.path("event").asText()));
                assertThat(reply.at("/payload/status").asText())
                        .as(e.getKey() + ": " + reply)
                        .isEqualTo("error");
                assertThat(reply.at("/payload/response/reason").asText())
                        .as(e.getKey())
                        .startsWith(e.getValue()[1] + ": " + e.getValue()[2]);
                Thread.sleep(15); // stay under the joins-per-second limit
            }
        }
    }

    @Test
    void aClientOfAnotherProjectNeverReceivesProjectAsChangesOrBroadcasts() throws Exception {
        String a = stack.projectId;
        String secret = "secret-of-A-" + UUID.randomUUID();
        try (Ws victim = Ws.open(stack.tokens.anon(a));
                Ws intruder = Ws.open(stack.tokens.anon(projectB))) {
            ObjectNode all = changesConfig("public", "t", null);
            all.putObject("broadcast").put("self", true);
            victim.join("realtime:room", "v1", all, null);
            assertThat(victim.await(f -> "v1".equals(f.path("ref").asText()))
                            .at("/payload/status")
                            .asText())
                    .isEqualTo("ok");

            // project B: the same topic and table, A's schema name spelled out, wildcard tables, filters
            // that try to escape, a token of A as access_token, a topic naming A's schema
            String aSchema = E2eStack.schemaOf(a);
            List<String[]> attempts = List.of(
                    new String[] {"realtime:room", "public", "t", null},
                    new String[] {"realtime:w1", "public", "*", null},
                    new String[] {"realtime:w2", aSchema, "t", null},
                    new String[] {"realtime:w3", "public", aSchema + ".t", null},
                    new String[] {"realtime:w4", "public", "t", "id=gt.0"},
                    new String[] {"realtime:w5", "public", "t", "id=gt.0) OR (true"},
                    new String[] {"realtime:w6", "public", "\"" + aSchema + "\".\"t\"", null},
                    new String[] {"realtime:" + a + ":room", "public", "t", null},
                    new String[] {"realtime:w7", "public", "../" + aSchema + "/t", null});
            int ok = 0;
            for (int i = 0; i < attempts.size(); i++) {
                String[] at = attempts.get(i);
                ObjectNode config = changesConfig(at[1], at[2], at[3]);
                config.putObject("broadcast").put("self", true);
                String ref = "i" + i;
                intruder.join(at[0], ref, config, null);
                JsonNode reply = intruder.await(f -> ref.equals(f.path("ref").asText()));
                ok += "ok".equals(reply.at("/payload/status").asText()) ? 1 : 0;
                System.out.printf(
                        "project B joins %s schema=%s table=%s filter=%s: %s %s%n",
                        at[0],
                        at[1],
                        at[2],
                        at[3],
                        reply.at("/payload/status").asText(),
                        reply.at("/payload/response/reason").asText(""));
                Thread.sleep(15); // stay under the joins-per-second limit
            }
            String ref = "tokA";
            intruder.join("realtime:room2", ref, JSON.createObjectNode(), stack.tokens.serviceRole(a));
            assertThat(intruder.await(f -> ref.equals(f.path("ref").asText()))
                            .at("/payload/response/reason")
                            .asText())
                    .isEqualTo("InvalidJWTToken: The access token belongs to another project than the API key");
            assertThat(ok)
                    .as("project B's own joins on public.t succeed (the attack surface is real)")
                    .isGreaterThanOrEqualTo(2);

            // project A writes and broadcasts its secret; project B writes its own row as a control
            stack.sql("INSERT INTO \"" + aSchema + "\".\"t\" VALUES (1, '" + secret + "')");
            victim.send(
                    "realtime:room",
                    "{\"type\":\"broadcast\",\"event\":\"msg\",\"payload\":{\"body\":\"" + secret + "\"}}");
            victim.awaitCarrying(secret, "postgres_changes");
            victim.awaitCarrying(secret, "broadcast");
            String control = "B-own-" + UUID.randomUUID();
            stack.sql("INSERT INTO \"" + E2eStack.schemaOf(projectB) + "\".\"t\" VALUES (1, '" + control + "')");
            intruder.send(
                    "realtime:room",
                    "{\"type\":\"broadcast\",\"event\":\"msg\",\"payload\":{\"body\":\"" + control + "\"}}");
            // B's subscribers work: its own change and broadcast arrive (after A's were published)
            intruder.awaitCarrying(control, "postgres_changes");
            intruder.awaitCarrying(control, "broadcast");
            // and for half a second more, nothing of the other project turns up on either side
            Awaitility.await("no frame crosses projects")
                    .during(Duration.ofMillis(500))
                    .atMost(Duration.ofSeconds(1))
                    .untilAsserted(() -> {
                        assertThat(intruder.frames)
                                .as("project B never sees project A's data")
                                .noneMatch(f -> f.contains(secret));
                        assertThat(victim.frames).as("nor A project B's").noneMatch(f -> f.contains(control));
                    });
        }
    }

    /**
     * Issue 24 point 5: a join on a socket whose connect-time apikey has expired, sent without a new
     * {@code access_token}, is refused with Supabase's words before any history is sent; the same
     * join with a new token is accepted and replays. {@link ExpiredApiKeyJsE2EIT} shows the same with
     * realtime-js.
     */
    @Test
    void aJoinOnAnExpiredApiKeyWithoutAccessTokenIsRefusedBeforeAnyHistory() throws Exception {
        String a = stack.projectId;
        String marker = "history-" + UUID.randomUUID();
        ObjectNode replay = JSON.createObjectNode();
        replay.putObject("broadcast")
                .put("self", true)
                .putObject("replay")
                .put("since", 0)
                .put("limit", 10);
        try (Ws writer = Ws.open(stack.tokens.anon(a));
                Ws late = Ws.open(stack.tokens.ttl(Duration.ofSeconds(3)).anon(a))) {
            writer.join("realtime:hist", "w1", replay.deepCopy(), null);
            assertThat(writer.await(f -> "w1".equals(f.path("ref").asText()))
                            .at("/payload/status")
                            .asText())
                    .isEqualTo("ok");
            writer.send(
                    "realtime:hist",
                    "{\"type\":\"broadcast\",\"event\":\"msg\",\"payload\":{\"body\":\"" + marker + "\"}}");
            writer.awaitCarrying(marker, "broadcast");
            Thread.sleep(4_500); // the late socket's apikey expires (exp has a one-second resolution)

            late.join("realtime:hist", "l1", replay.deepCopy(), null);
            JsonNode refused = late.await(f -> "l1".equals(f.path("ref").asText()));
            assertThat(refused.at("/payload/status").asText()).isEqualTo("error");
            assertThat(refused.at("/payload/response/reason").asText())
                    .matches("InvalidJWTToken: Token has expired \\d+ seconds ago");
            Thread.sleep(500);
            assertThat(late.frames).as("no history after the refusal").noneMatch(f -> f.contains(marker));

            late.join("realtime:hist", "l2", replay.deepCopy(), stack.tokens.anon(a));
            assertThat(late.await(f -> "l2".equals(f.path("ref").asText()))
                            .at("/payload/status")
                            .asText())
                    .isEqualTo("ok");
            late.awaitCarrying(marker, "broadcast"); // the replay, now that the token is new
        }
    }

    /** A join config with one postgres_changes binding to every event of {@code schema.table}. */
    private static ObjectNode changesConfig(String schema, String table, String filter) {
        ObjectNode config = JSON.createObjectNode();
        ObjectNode binding = config.putArray("postgres_changes")
                .addObject()
                .put("event", "*")
                .put("schema", schema)
                .put("table", table);
        if (filter != null) {
            binding.put("filter", filter);
        }
        return config;
    }

    // ---- tokens ----

    private static String b64(byte[] b) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
    }

    /** A token whose header names {@code alg} but whose signature is HMAC-SHA256 with the real HS secret. */
    private static String hmacWithHeader(String alg, Map<String, Object> claims) throws Exception {
        String signingInput = b64(("{\"alg\":\"" + alg + "\",\"typ\":\"JWT\"}").getBytes(StandardCharsets.UTF_8)) + "."
                + b64(JSON.writeValueAsBytes(claims));
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(E2eStack.SECRET.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        return signingInput + "." + b64(mac.doFinal(signingInput.getBytes(StandardCharsets.US_ASCII)));
    }

    private static String rs256(Map<String, Object> claims) throws Exception {
        RSAKey key = new RSAKeyGenerator(2048).generate();
        SignedJWT jwt = new SignedJWT(
                new JWSHeader.Builder(JWSAlgorithm.RS256)
                        .type(JOSEObjectType.JWT)
                        .build(),
                JWTClaimsSet.parse(claims));
        jwt.sign(new RSASSASigner(key));
        return jwt.serialize();
    }

    private static String hs512(Map<String, Object> claims) throws Exception {
        SignedJWT jwt = new SignedJWT(
                new JWSHeader.Builder(JWSAlgorithm.HS512)
                        .type(JOSEObjectType.JWT)
                        .build(),
                JWTClaimsSet.parse(claims));
        byte[] key = (E2eStack.SECRET + E2eStack.SECRET).getBytes(StandardCharsets.UTF_8); // HS512 needs 64 bytes
        jwt.sign(new MACSigner(key));
        return jwt.serialize();
    }

    // ---- raw HTTP upgrade ----

    private record Http(int status, String body) {}

    private static Http upgrade(String pathAndQuery) throws Exception {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), stack.wsPort(0))) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(("GET " + pathAndQuery
                            + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            int contentLength = -1;
            int headerEnd = -1;
            byte[] chunk = new byte[4096];
            while (true) {
                String text = buf.toString(StandardCharsets.ISO_8859_1);
                if (headerEnd < 0 && (headerEnd = text.indexOf("\r\n\r\n")) >= 0) {
                    var m = java.util.regex.Pattern.compile("(?im)^content-length:\\s*(\\d+)")
                            .matcher(text.substring(0, headerEnd));
                    contentLength = m.find() ? Integer.parseInt(m.group(1)) : 0;
                    if (text.startsWith("HTTP/1.1 101")) {
                        return new Http(101, "");
                    }
                }
                if (headerEnd >= 0 && buf.size() >= headerEnd + 4 + contentLength) {
                    int status = Integer.parseInt(text.substring(9, 12));
                    return new Http(
                            status,
                            new String(buf.toByteArray(), headerEnd + 4, contentLength, StandardCharsets.UTF_8));
                }
                int n = in.read(chunk);
                if (n < 0) {
                    throw new AssertionError("connection closed before a full response: " + text);
                }
                buf.write(chunk, 0, n);
            }
        }
    }

    // ---- raw WebSocket (vsn 1.0.0) ----

    private static final class Ws implements WebSocket.Listener, AutoCloseable {
        final List<String> frames = new CopyOnWriteArrayList<>();
        private final StringBuilder partial = new StringBuilder();
        private WebSocket ws;

        volatile int closeCode;
        volatile String closeReason;

        static Ws open(String apikey) throws Exception {
            return openQuery("vsn=1.0.0&apikey=" + apikey);
        }

        static Ws openQuery(String query) throws Exception {
            Ws w = new Ws();
            w.ws = HttpClient.newHttpClient()
                    .newWebSocketBuilder()
                    .buildAsync(URI.create(stack.wsUrl(0) + "/websocket?" + query), w)
                    .get(20, TimeUnit.SECONDS);
            return w;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket w, int statusCode, String reason) {
            closeReason = reason;
            closeCode = statusCode;
            return null;
        }

        void join(String topic, String ref, ObjectNode config, String accessToken) throws Exception {
            ObjectNode payload = JSON.createObjectNode();
            payload.set("config", config);
            if (accessToken != null) {
                payload.put("access_token", accessToken);
            }
            ObjectNode msg = JSON.createObjectNode()
                    .put("topic", topic)
                    .put("event", "phx_join")
                    .put("ref", ref)
                    .put("join_ref", ref);
            msg.set("payload", payload);
            ws.sendText(msg.toString(), true).get(10, TimeUnit.SECONDS);
        }

        void send(String topic, String broadcastPayload) throws Exception {
            ws.sendText(
                            "{\"topic\":\"" + topic + "\",\"event\":\"broadcast\",\"payload\":" + broadcastPayload
                                    + ",\"ref\":null}",
                            true)
                    .get(10, TimeUnit.SECONDS);
        }

        /** Waits for a frame matching {@code p} (frames received so far included). */
        JsonNode await(java.util.function.Predicate<JsonNode> p) {
            java.util.concurrent.atomic.AtomicReference<JsonNode> found =
                    new java.util.concurrent.atomic.AtomicReference<>();
            Waits.until(
                    "a matching frame",
                    WAIT,
                    Duration.ofMillis(20),
                    () -> {
                        first(p).ifPresent(found::set);
                        return found.get() != null;
                    },
                    () -> "frames: " + frames);
            return found.get();
        }

        /** Waits for a {@code event} frame whose text contains {@code marker}. */
        JsonNode awaitCarrying(String marker, String event) {
            return await(f -> f.toString().contains(marker)
                    && event.equals(f.path("event").asText()));
        }

        private java.util.Optional<JsonNode> first(java.util.function.Predicate<JsonNode> p) throws Exception {
            for (String frame : frames) {
                JsonNode f = JSON.readTree(frame);
                if (p.test(f)) {
                    return java.util.Optional.of(f);
                }
            }
            return java.util.Optional.empty();
        }

        @Override
        public CompletionStage<?> onText(WebSocket w, CharSequence data, boolean last) {
            partial.append(data);
            if (last) {
                frames.add(partial.toString());
                partial.setLength(0);
            }
            w.request(1);
            return null;
        }

        @Override
        public void close() {
            ws.abort();
        }
    }
}
