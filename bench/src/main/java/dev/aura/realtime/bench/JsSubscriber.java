package dev.aura.realtime.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.testkit.Jars;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One unmodified realtime-js client (e2e/js/driver.mjs in a node process of ours) subscribed to
 * two channels: {@code broadcastChannel} (private, broadcast listener, as an app listens to
 * Broadcast from Database) and {@code changesChannel} (public, postgres_changes INSERT listener on
 * a table). Every line gets its arrival time here; a message's latency is that time minus the
 * microsecond stamp {@code t} the writer put in it ({@code payload.t} of a broadcast,
 * {@code new.t} of a change): the node → Java pipe is included (well under a millisecond).
 */
final class JsSubscriber implements AutoCloseable {
    private final Process node;
    private final OutputStream stdin;
    private final Set<String> subscribed = ConcurrentHashMap.newKeySet();
    private volatile boolean changesReady;
    private volatile boolean socketOpen;
    private volatile boolean closing;
    private volatile Meter broadcasts = new Meter();
    private volatile Meter changes = new Meter();
    private final AtomicLong errors = new AtomicLong();

    /** Received messages of one path: count, latency, last arrival. */
    static final class Meter {
        final Stats latency = new Stats();
        final AtomicLong count = new AtomicLong();
        volatile long lastNanos;
        volatile long firstNanos;

        void add(long latencyMicros) {
            long now = System.nanoTime();
            if (count.getAndIncrement() == 0) {
                firstNanos = now;
            }
            lastNanos = now;
            latency.add(latencyMicros);
        }
    }

    private JsSubscriber(Process node) {
        this.node = node;
        this.stdin = node.getOutputStream();
        Thread.ofPlatform().daemon().name("realtime-js-subscriber").start(this::read);
    }

    /**
     * Starts node, connects with an authenticated user's token and subscribes both channels;
     * waits for SUBSCRIBED on both and "Subscribed to PostgreSQL" on the changes channel.
     */
    static JsSubscriber start(Stack s, String accessToken, String broadcastChannel, String changesChannel, String table)
            throws Exception {
        Path root = Jars.repoRoot();
        Process p = new ProcessBuilder("node", root.resolve("e2e/js/driver.mjs").toString())
                .directory(root.resolve("e2e/js").toFile())
                .redirectError(s.runDir.resolve("realtime-js-dbcast.log").toFile())
                .start();
        JsSubscriber js = new JsSubscriber(p);
        js.command("{\"id\":1,\"type\":\"connect\",\"url\":\"" + s.realtimeJsUrl() + "\",\"apikey\":\""
                + s.tokens.anon(s.projectId) + "\",\"vsn\":\"2.0.0\",\"options\":{\"accessToken\":\"" + accessToken
                + "\"}}");
        // joins sent before the socket opened can leave with the apikey instead of the access token
        // (realtime-js resolves the accessToken callback asynchronously): a first CHANNEL_ERROR
        long open = System.nanoTime() + 30_000_000_000L;
        while (!js.socketOpen && System.nanoTime() < open) {
            Procs.sleep(20);
        }
        Procs.sleep(200);
        js.command(
                "{\"id\":2,\"type\":\"channel\",\"name\":\"" + broadcastChannel + "\",\"config\":{\"private\":true}}");
        js.command("{\"id\":3,\"type\":\"on\",\"channel\":\"" + broadcastChannel
                + "\",\"kind\":\"broadcast\",\"filter\":{\"event\":\"*\"}}");
        js.command("{\"id\":4,\"type\":\"subscribe\",\"channel\":\"" + broadcastChannel + "\"}");
        js.command("{\"id\":5,\"type\":\"channel\",\"name\":\"" + changesChannel + "\"}");
        js.command("{\"id\":6,\"type\":\"on\",\"channel\":\"" + changesChannel + "\",\"kind\":\"system\"}");
        js.command("{\"id\":7,\"type\":\"on\",\"channel\":\"" + changesChannel
                + "\",\"kind\":\"postgres_changes\",\"filter\":{\"event\":\"INSERT\",\"schema\":\"public\",\"table\":\""
                + table + "\"}}");
        js.command("{\"id\":8,\"type\":\"subscribe\",\"channel\":\"" + changesChannel + "\"}");
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!(js.subscribed.contains(broadcastChannel)
                && js.subscribed.contains(changesChannel)
                && js.changesReady)) {
            if (System.nanoTime() > deadline) {
                js.close();
                throw new IllegalStateException("realtime-js did not subscribe " + broadcastChannel + " and "
                        + changesChannel + " within 30 s (subscribed: " + js.subscribed + ", postgres ready: "
                        + js.changesReady + "); see " + s.runDir.resolve("realtime-js-dbcast.log"));
            }
            Procs.sleep(50);
        }
        return js;
    }

    private void command(String json) throws Exception {
        stdin.write((json + "\n").getBytes(StandardCharsets.UTF_8));
        stdin.flush();
    }

    private void read() {
        try (BufferedReader r =
                new BufferedReader(new InputStreamReader(node.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                long now = LatencyBench.micros(Instant.now());
                JsonNode n = Stack.JSON.readTree(line);
                switch (n.path("type").asText()) {
                    case "broadcast" -> {
                        JsonNode t = n.path("payload").path("payload").path("t");
                        if (t.isNumber()) {
                            broadcasts.add(now - t.asLong());
                        }
                    }
                    case "postgres_changes" -> {
                        JsonNode t = n.path("payload").path("new").path("t");
                        if (t.isNumber()) {
                            changes.add(now - t.asLong());
                        }
                    }
                    case "status" -> {
                        if ("SUBSCRIBED".equals(n.path("status").asText())) {
                            subscribed.add(n.path("channel").asText());
                        } else {
                            System.err.println("realtime-js status: " + line);
                        }
                    }
                    case "socket" -> {
                        if ("open".equals(n.path("event").asText())) {
                            socketOpen = true;
                        }
                    }
                    case "system" -> {
                        if (n.toString().contains(JoinBench.SUBSCRIBED)) {
                            changesReady = true;
                        }
                    }
                    case "error", "exception" -> {
                        errors.incrementAndGet();
                        System.err.println("realtime-js driver: " + line);
                    }
                    default -> {}
                }
            }
        } catch (Exception e) {
            if (!closing) {
                System.err.println("realtime-js reader stopped: " + e);
            }
        }
    }

    /** Starts new meters (the previous ones keep what they counted). */
    void reset() {
        broadcasts = new Meter();
        changes = new Meter();
    }

    Meter broadcasts() {
        return broadcasts;
    }

    Meter changes() {
        return changes;
    }

    long errors() {
        return errors.get();
    }

    @Override
    public void close() {
        closing = true;
        try {
            command("{\"id\":99,\"type\":\"exit\"}");
            node.waitFor(5, TimeUnit.SECONDS);
        } catch (Exception ignored) {
            // best effort
        }
        node.destroyForcibly();
    }
}
