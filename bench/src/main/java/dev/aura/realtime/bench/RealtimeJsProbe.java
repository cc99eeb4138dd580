package dev.aura.realtime.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.testkit.Jars;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The unmodified realtime-js client, driven by {@code e2e/js/driver.mjs} in a node process we start
 * ourselves so every stdout line gets its arrival time here (the testkit client does not keep
 * one). Latency = arrival of the driver's {@code postgres_changes} line − {@code commit_timestamp};
 * it includes the node → Java pipe (well under a millisecond).
 */
final class RealtimeJsProbe implements AutoCloseable {
    private final Process node;
    private final OutputStream stdin;
    private volatile Stats stats = new Stats();
    private volatile String tag;
    private final CountDownLatch subscribed = new CountDownLatch(1);
    private final CountDownLatch firstEvent = new CountDownLatch(1);

    private RealtimeJsProbe(Process node) {
        this.node = node;
        this.stdin = node.getOutputStream();
        Thread.ofPlatform().daemon().name("realtime-js-reader").start(this::read);
    }

    static RealtimeJsProbe start(Stack s, String table) throws Exception {
        Path root = Jars.repoRoot();
        Process p = new ProcessBuilder("node", root.resolve("e2e/js/driver.mjs").toString())
                .directory(root.resolve("e2e/js").toFile())
                .redirectError(s.runDir.resolve("realtime-js.log").toFile())
                .start();
        RealtimeJsProbe probe = new RealtimeJsProbe(p);
        probe.command("{\"id\":1,\"type\":\"connect\",\"url\":\"" + s.realtimeJsUrl() + "\",\"apikey\":\""
                + s.tokens.anon(s.projectId) + "\",\"vsn\":\"1.0.0\"}");
        probe.command("{\"id\":2,\"type\":\"channel\",\"name\":\"lat-js\"}");
        probe.command("{\"id\":3,\"type\":\"on\",\"channel\":\"lat-js\",\"kind\":\"system\"}");
        probe.command(
                "{\"id\":4,\"type\":\"on\",\"channel\":\"lat-js\",\"kind\":\"postgres_changes\",\"filter\":{\"event\":\"INSERT\","
                        + "\"schema\":\"public\",\"table\":\"" + table + "\"}}");
        probe.command("{\"id\":5,\"type\":\"subscribe\",\"channel\":\"lat-js\"}");
        if (!probe.subscribed.await(30, TimeUnit.SECONDS)) {
            probe.close();
            throw new IllegalStateException("realtime-js did not report 'Subscribed to PostgreSQL' within 30 s; see "
                    + s.runDir.resolve("realtime-js.log"));
        }
        // the registry entry must reach the worker: probe until realtime-js sees a row
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!probe.firstEvent.await(300, TimeUnit.MILLISECONDS)) {
            if (System.nanoTime() > deadline) {
                probe.close();
                throw new IllegalStateException("realtime-js received no postgres_changes event within 30 s");
            }
            s.pg.execute("INSERT INTO " + s.table(table) + "(v, note) VALUES (0, 'probe-js')");
        }
        return probe;
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
                String type = n.path("type").asText();
                if (type.equals("system") && n.toString().contains("Subscribed to PostgreSQL")) {
                    subscribed.countDown();
                } else if (type.equals("postgres_changes")) {
                    String ts = n.path("payload").path("commit_timestamp").asText(null);
                    String want = tag;
                    if (ts != null) {
                        firstEvent.countDown();
                    }
                    if (ts != null
                            && (want == null
                                    || want.equals(n.path("payload")
                                            .path("new")
                                            .path("note")
                                            .asText()))) {
                        stats.add(now - LatencyBench.micros(Instant.parse(ts)));
                    }
                } else if (type.equals("error")) {
                    System.err.println("realtime-js driver: " + line);
                }
            }
        } catch (Exception e) {
            System.err.println("realtime-js reader stopped: " + e);
        }
    }

    void reset() {
        stats = new Stats();
    }

    /** Counts from now on only the rows whose {@code note} is {@code tag} (probe and warm-up rows excluded). */
    void countOnly(String tag) {
        this.tag = tag;
        stats = new Stats();
    }

    Stats stats() {
        return stats;
    }

    @Override
    public void close() {
        try {
            command("{\"id\":99,\"type\":\"exit\"}");
            node.waitFor(5, TimeUnit.SECONDS);
        } catch (Exception ignored) {
            // best effort
        }
        node.destroyForcibly();
    }
}
