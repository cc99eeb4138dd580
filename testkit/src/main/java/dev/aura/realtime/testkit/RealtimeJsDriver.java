package dev.aura.realtime.testkit;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The Node child process running {@code e2e/js/driver.mjs}, and its line protocol: the command
 * half of {@link RealtimeJsClient}.
 *
 * <p>Commands are JSON objects written to the driver's stdin, one per line; each gets an
 * {@code id} and is answered by {@code {"type":"ack","id":..,"result":..}} or
 * {@code {"type":"error","id":..,"message":..}}. Every line the driver prints, answers included,
 * is recorded in order in the {@link RealtimeJsEvents}; answers also complete their command. The
 * protocol is documented at the top of driver.mjs.
 *
 * <p>Threads: one daemon thread per driver reads stdout; stderr (realtime-js logs) goes to
 * {@link #logFile()} under {@code target/realtime-js/}. {@link #call} may be used from any thread.
 */
final class RealtimeJsDriver implements AutoCloseable {
    /**
     * Reads what the client received, at every size the product delivers: numbers of a {@code
     * numeric}'s 147,455 digits, values nested as deep as the pipeline carries (docs/design.md C13).
     */
    private static final ObjectMapper JSON = new ObjectMapper(com.fasterxml.jackson.core.JsonFactory.builder()
            .streamReadConstraints(com.fasterxml.jackson.core.StreamReadConstraints.builder()
                    .maxNumberLength(1_000_000)
                    .maxNestingDepth(100_000)
                    .maxStringLength(Integer.MAX_VALUE)
                    .build())
            .streamWriteConstraints(com.fasterxml.jackson.core.StreamWriteConstraints.builder()
                    .maxNestingDepth(100_000)
                    .build())
            .build());

    private static final AtomicInteger SEQUENCE = new AtomicInteger();

    private final Process process;
    private final OutputStream stdin;
    private final Path logFile;
    private final RealtimeJsEvents events;
    private final Map<String, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();
    private final AtomicInteger nextId = new AtomicInteger();

    private RealtimeJsDriver(Process process, Path logFile) {
        this.process = process;
        this.stdin = process.getOutputStream();
        this.logFile = logFile;
        this.events = new RealtimeJsEvents(() -> Commands.tail(logFile, 20));
        Thread reader = new Thread(this::readEvents, "realtime-js-reader-" + process.pid());
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Starts {@code node driver.mjs} ({@code $NODE_BIN} or {@code node} on PATH) in {@code e2e/js}.
     *
     * @throws IllegalStateException if Node or {@code e2e/js/node_modules} is missing
     */
    static RealtimeJsDriver start() {
        Path jsDir = RepoRoot.find().resolve("e2e/js");
        if (!Files.isDirectory(jsDir.resolve("node_modules/@supabase/realtime-js"))) {
            throw new IllegalStateException(jsDir.resolve("node_modules") + " lacks @supabase/realtime-js:"
                    + " run npm ci --prefix e2e/js (or scripts/stack.sh install)");
        }
        String node = System.getenv().getOrDefault("NODE_BIN", "node");
        Path logDir = Path.of("target", "realtime-js").toAbsolutePath();
        Path logFile =
                logDir.resolve("driver-" + ProcessHandle.current().pid() + "-" + SEQUENCE.incrementAndGet() + ".log");
        try {
            Files.createDirectories(logDir);
            Process process = new ProcessBuilder(node, "driver.mjs")
                    .directory(jsDir.toFile())
                    .redirectError(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
                    .start();
            return new RealtimeJsDriver(process, logFile);
        } catch (IOException e) {
            throw new IllegalStateException(
                    "cannot start '" + node + " driver.mjs' in " + jsDir
                            + ": is Node.js >= 20 installed? (scripts/stack.sh install)",
                    e);
        }
    }

    RealtimeJsEvents events() {
        return events;
    }

    Path logFile() {
        return logFile;
    }

    /**
     * Sends {@code command} (its {@code id} is set here) and waits up to {@code timeout} for its
     * answer.
     *
     * @return the ack's {@code result}
     * @throws RealtimeJsClient.DriverException if the driver answers with an error
     * @throws AssertionError if no answer arrives in time
     */
    JsonNode call(ObjectNode command, Duration timeout) {
        String id = String.valueOf(nextId.incrementAndGet());
        command.put("id", id);
        CompletableFuture<JsonNode> answer = new CompletableFuture<>();
        pending.put(id, answer);
        try {
            synchronized (stdin) {
                stdin.write((JSON.writeValueAsString(command) + "\n").getBytes(StandardCharsets.UTF_8));
                stdin.flush();
            }
            JsonNode reply = answer.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if ("error".equals(reply.path("type").asText())) {
                throw new RealtimeJsClient.DriverException(
                        command.path("type").asText(), reply.path("message").asText());
            }
            return reply.path("result");
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "cannot write to the realtime-js driver (alive: " + process.isAlive() + ")\n"
                            + Commands.tail(logFile, 20),
                    e);
        } catch (TimeoutException e) {
            throw new AssertionError("realtime-js driver did not answer " + command + " within " + timeout
                    + "\n--- driver log ---\n" + Commands.tail(logFile, 20));
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted waiting for the driver", e);
        } finally {
            pending.remove(id);
        }
    }

    /** Kills the Node process. Idempotent. */
    @Override
    public void close() {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * An event as text, at most 2,000 characters (JsonNode.toString() refuses what is nested over
     * Jackson's default 1,000 levels, and a 2 MB value makes no useful failure message).
     */
    static String text(JsonNode event) {
        String s;
        try {
            s = JSON.writeValueAsString(event);
        } catch (JsonProcessingException e) {
            s = "(not printable: " + e.getOriginalMessage() + ")";
        }
        return s.length() > 2_000 ? s.substring(0, 2_000) + "... (" + s.length() + " characters)" : s;
    }

    private void readEvents() {
        try (BufferedReader lines =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = lines.readLine()) != null) {
                JsonNode event;
                try {
                    event = JSON.readTree(line);
                } catch (JsonProcessingException e) {
                    event = JSON.createObjectNode()
                            .put("type", "invalid_output")
                            .put("line", line);
                }
                record(event);
            }
        } catch (IOException e) {
            // The process ended; fall through to report it.
        }
        String reason = "realtime-js driver exited" + (process.isAlive() ? "" : " with " + process.exitValue());
        record(JSON.createObjectNode().put("type", "driver_exit"));
        pending.values().forEach(f -> f.completeExceptionally(new IllegalStateException(reason)));
    }

    private void record(JsonNode event) {
        events.record(event);
        String type = event.path("type").asText();
        if ("ack".equals(type) || "error".equals(type)) {
            CompletableFuture<JsonNode> answer = pending.get(event.path("id").asText());
            if (answer != null) {
                answer.complete(event);
            }
        }
    }
}
