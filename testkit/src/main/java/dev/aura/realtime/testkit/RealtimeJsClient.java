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
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * The real {@code @supabase/realtime-js} client, driven through {@code e2e/js/driver.mjs} in a
 * Node child process.
 *
 * <p>Commands are JSON objects written to the driver's stdin, one per line; every command gets an
 * {@code id} and is answered by {@code {"type":"ack","id":..,"result":..}} or
 * {@code {"type":"error","id":..,"message":..}}. Everything else the driver prints is an event
 * (postgres_changes, broadcast, presence, system, status, socket, ...) recorded in order in
 * {@link #events()}; acks and errors are recorded too. The protocol is documented at the top of
 * driver.mjs.
 *
 * <p>Threads: one daemon thread reads the driver's stdout; the driver's stderr (realtime-js logs)
 * goes to {@link #logFile()} under {@code target/realtime-js/}. Methods may be called from any
 * thread.
 */
public final class RealtimeJsClient implements AutoCloseable {
    /** How long a command waits for its ack. */
    public static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(20);

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final AtomicInteger SEQUENCE = new AtomicInteger();

    private final Process process;
    private final OutputStream stdin;
    private final Path logFile;
    private final List<JsonNode> events = new ArrayList<>();
    private final Map<String, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();
    private final AtomicInteger nextId = new AtomicInteger();
    private final Thread reader;

    private RealtimeJsClient(Process process, Path logFile) {
        this.process = process;
        this.stdin = process.getOutputStream();
        this.logFile = logFile;
        this.reader = new Thread(this::readEvents, "realtime-js-reader-" + process.pid());
        this.reader.setDaemon(true);
        this.reader.start();
    }

    /**
     * Starts {@code node e2e/js/driver.mjs} ({@code $NODE_BIN} or {@code node} on PATH) and waits
     * until it answers a {@code ping}.
     *
     * @throws IllegalStateException if Node or {@code e2e/js/node_modules} is missing, or the driver
     *     does not answer within 20 s
     */
    public static RealtimeJsClient start() {
        Path jsDir = RepoRoot.find().resolve("e2e/js");
        if (!Files.isDirectory(jsDir.resolve("node_modules/@supabase/realtime-js"))) {
            throw new IllegalStateException(jsDir.resolve("node_modules") + " lacks @supabase/realtime-js:"
                    + " run npm ci --prefix e2e/js (or scripts/stack.sh install)");
        }
        String node = System.getenv().getOrDefault("NODE_BIN", "node");
        Path logDir = Path.of("target", "realtime-js").toAbsolutePath();
        Path logFile =
                logDir.resolve("driver-" + ProcessHandle.current().pid() + "-" + SEQUENCE.incrementAndGet() + ".log");
        Process process;
        try {
            Files.createDirectories(logDir);
            process = new ProcessBuilder(node, "driver.mjs")
                    .directory(jsDir.toFile())
                    .redirectError(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
                    .start();
        } catch (IOException e) {
            throw new IllegalStateException(
                    "cannot start '" + node + " driver.mjs' in " + jsDir
                            + ": is Node.js >= 20 installed? (scripts/stack.sh install)",
                    e);
        }
        RealtimeJsClient client = new RealtimeJsClient(process, logFile);
        try {
            client.call("ping", Map.of());
        } catch (RuntimeException | AssertionError e) {
            client.close();
            throw new IllegalStateException(
                    "realtime-js driver did not start: " + e.getMessage() + "\n--- tail of " + logFile + " ---\n"
                            + Commands.tail(logFile, 30),
                    e);
        }
        return client;
    }

    // ---- raw protocol ------------------------------------------------------------------------

    /**
     * Sends a command and waits for its ack.
     *
     * @param type the command name, e.g. {@code "subscribe"}
     * @param args the other fields of the command (converted with Jackson)
     * @return the ack's {@code result} (a {@code NullNode} when the command returns nothing)
     * @throws DriverException if the driver answers with an error event
     * @throws AssertionError if no answer arrives within {@link #COMMAND_TIMEOUT}
     */
    public JsonNode call(String type, Map<String, ?> args) {
        ObjectNode command = JSON.valueToTree(args);
        command.put("type", type);
        return call(command);
    }

    /**
     * Sends a command object (its {@code id} is set here) and waits for its ack.
     *
     * @return the ack's {@code result}
     * @throws DriverException if the driver answers with an error event
     * @throws AssertionError if no answer arrives within {@link #COMMAND_TIMEOUT}
     */
    public JsonNode call(ObjectNode command) {
        String id = String.valueOf(nextId.incrementAndGet());
        command.put("id", id);
        CompletableFuture<JsonNode> answer = new CompletableFuture<>();
        pending.put(id, answer);
        try {
            synchronized (stdin) {
                stdin.write((JSON.writeValueAsString(command) + "\n").getBytes(StandardCharsets.UTF_8));
                stdin.flush();
            }
            JsonNode reply = answer.get(COMMAND_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            if ("error".equals(reply.path("type").asText())) {
                throw new DriverException(
                        command.path("type").asText(), reply.path("message").asText());
            }
            return reply.path("result");
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "cannot write to the realtime-js driver (alive: " + process.isAlive() + ")\n"
                            + Commands.tail(logFile, 20),
                    e);
        } catch (TimeoutException e) {
            throw new AssertionError("realtime-js driver did not answer " + command + " within " + COMMAND_TIMEOUT
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

    /** Same as {@link #call(ObjectNode)}: sends a raw command object and returns the ack's result. */
    public JsonNode send(ObjectNode command) {
        return call(command);
    }

    /** Returns a new empty JSON object to build a raw command for {@link #send(ObjectNode)}. */
    public static ObjectNode command(String type) {
        return JSON.createObjectNode().put("type", type);
    }

    // ---- typed helpers -----------------------------------------------------------------------

    /** Creates the client for {@code url} with protocol 2.0.0 and connects. */
    public void connect(String url, String apikey) {
        connect(url, apikey, "2.0.0", Map.of());
    }

    /**
     * Creates the client and connects.
     *
     * @param url websocket endpoint, e.g. {@code ws://127.0.0.1:4000/realtime/v1}
     * @param apikey the JWT sent as {@code apikey} query parameter
     * @param vsn protocol version, {@code "1.0.0"} or {@code "2.0.0"}
     * @param options extra RealtimeClient options (e.g. {@code heartbeatIntervalMs}, {@code timeout},
     *     {@code params})
     */
    public void connect(String url, String apikey, String vsn, Map<String, ?> options) {
        call("connect", map("url", url, "apikey", apikey, "vsn", vsn, "options", options));
    }

    /** Creates channel {@code name} (topic {@code realtime:name}) with default config. */
    public void channel(String name) {
        channel(name, Map.of());
    }

    /** Creates channel {@code name} with {@code config} (e.g. {@code {broadcast: {self: true, ack: true}}}). */
    public void channel(String name, Map<String, ?> config) {
        call("channel", map("name", name, "config", config));
    }

    /** Registers a postgres_changes listener, e.g. filter {@code {event:"*", schema:"public", table:"messages"}}. */
    public void onPostgresChanges(String channel, Map<String, ?> filter) {
        on(channel, "postgres_changes", filter);
    }

    /** Registers a broadcast listener for {@code event} ({@code "*"} for all). */
    public void onBroadcast(String channel, String event) {
        on(channel, "broadcast", Map.of("event", event));
    }

    /** Registers a presence listener for {@code event}: {@code sync}, {@code join} or {@code leave}. */
    public void onPresence(String channel, String event) {
        on(channel, "presence", Map.of("event", event));
    }

    /** Registers a listener for system messages on the channel. */
    public void onSystem(String channel) {
        on(channel, "system", Map.of());
    }

    /** Registers a listener of any kind; see driver.mjs. */
    public void on(String channel, String kind, Map<String, ?> filter) {
        call("on", map("channel", channel, "kind", kind, "filter", filter));
    }

    /**
     * Calls {@code channel.subscribe(cb)}; returns at once. Each status the callback reports is
     * recorded as a {@code status} event; see {@link #awaitStatus}.
     */
    public void subscribe(String channel) {
        call("subscribe", map("channel", channel));
    }

    /**
     * Subscribes and waits for {@code SUBSCRIBED}.
     *
     * @throws AssertionError if another terminal status or nothing arrives within {@code timeout}
     */
    public void subscribeAndAwait(String channel, Duration timeout) {
        int mark = eventCount();
        subscribe(channel);
        JsonNode status = awaitEvent(
                mark,
                e -> "status".equals(e.path("type").asText())
                        && channel.equals(e.path("channel").asText()),
                timeout);
        if (!"SUBSCRIBED".equals(status.path("status").asText())) {
            throw new AssertionError("channel " + channel + " reported " + status + " instead of SUBSCRIBED");
        }
    }

    /** Sends a broadcast over the socket; returns what {@code channel.send} resolved to ({@code "ok"}, {@code "timed out"}, ...). */
    public String sendBroadcast(String channel, String event, Object payload) {
        return call("send", map("channel", channel, "event", event, "payload", payload))
                .asText();
    }

    /** Sends a broadcast through {@code channel.httpSend}; returns its result object. */
    public JsonNode httpSend(String channel, String event, Object payload) {
        return call("httpSend", map("channel", channel, "event", event, "payload", payload));
    }

    /** Tracks presence with {@code payload}; returns what {@code channel.track} resolved to. */
    public String track(String channel, Map<String, ?> payload) {
        return call("track", map("channel", channel, "payload", payload)).asText();
    }

    /** Untracks presence; returns what {@code channel.untrack} resolved to. */
    public String untrack(String channel) {
        return call("untrack", map("channel", channel)).asText();
    }

    /** Returns {@code channel.presenceState()}. */
    public JsonNode presenceState(String channel) {
        return call("presenceState", map("channel", channel));
    }

    /** Calls {@code client.setAuth(token)} (pushes the token to joined channels). */
    public void setAuth(String token) {
        call("setAuth", map("token", token));
    }

    /** Unsubscribes the channel; returns what {@code unsubscribe} resolved to. */
    public String unsubscribe(String channel) {
        return call("unsubscribe", map("channel", channel)).asText();
    }

    /** Calls {@code client.removeAllChannels()} (which also disconnects). */
    public void removeAll() {
        call("removeAll", Map.of());
    }

    /** Disconnects the socket. */
    public void disconnect() {
        call("disconnect", Map.of());
    }

    /** Returns {@code client.isConnected()}. */
    public boolean isConnected() {
        return call("isConnected", Map.of()).asBoolean();
    }

    // ---- events ------------------------------------------------------------------------------

    /** Returns a snapshot of every event received so far, in order (acks and errors included). */
    public List<JsonNode> events() {
        synchronized (events) {
            return List.copyOf(events);
        }
    }

    /** Returns how many events were received so far; pass it to {@link #awaitEvent(int, Predicate, Duration)}. */
    public int eventCount() {
        synchronized (events) {
            return events.size();
        }
    }

    /**
     * Waits for an event (received at any time so far or later) matching {@code predicate}.
     *
     * @return the first matching event
     * @throws AssertionError after {@code timeout}, listing the events seen
     */
    public JsonNode awaitEvent(Predicate<JsonNode> predicate, Duration timeout) {
        return awaitEvent(0, predicate, timeout);
    }

    /**
     * Waits for an event at index {@code fromIndex} or later matching {@code predicate}.
     *
     * @return the first matching event
     * @throws AssertionError after {@code timeout}, listing the events seen
     */
    public JsonNode awaitEvent(int fromIndex, Predicate<JsonNode> predicate, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (events) {
            int checked = fromIndex;
            while (true) {
                for (; checked < events.size(); checked++) {
                    if (predicate.test(events.get(checked))) {
                        return events.get(checked);
                    }
                }
                long remainingMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (remainingMs <= 0) {
                    throw new AssertionError("no matching realtime-js event within " + timeout + " (from index "
                            + fromIndex + "); events seen:\n" + describe(events) + "\n--- driver log ---\n"
                            + Commands.tail(logFile, 20));
                }
                try {
                    events.wait(Math.min(remainingMs, 200));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted", e);
                }
            }
        }
    }

    /** Waits for a {@code status} event of {@code channel} with {@code status} (e.g. {@code SUBSCRIBED}). */
    public JsonNode awaitStatus(String channel, String status, Duration timeout) {
        return awaitEvent(
                e -> "status".equals(e.path("type").asText())
                        && channel.equals(e.path("channel").asText())
                        && status.equals(e.path("status").asText()),
                timeout);
    }

    /**
     * Asserts that no event at index {@code fromIndex} or later matches during {@code window}.
     *
     * @throws AssertionError naming the unexpected event
     */
    public void assertNoEvent(int fromIndex, Predicate<JsonNode> predicate, Duration window) {
        Instant end = Instant.now().plus(window);
        while (Instant.now().isBefore(end)) {
            List<JsonNode> snapshot = events();
            for (int i = fromIndex; i < snapshot.size(); i++) {
                if (predicate.test(snapshot.get(i))) {
                    throw new AssertionError("unexpected realtime-js event: " + snapshot.get(i));
                }
            }
            Commands.sleep(Duration.ofMillis(50));
        }
    }

    /** Returns the driver's stderr log (realtime-js logger output and driver diagnostics). */
    public Path logFile() {
        return logFile;
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

    // ---- internals ---------------------------------------------------------------------------

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
        synchronized (events) {
            events.add(event);
            events.notifyAll();
        }
        String type = event.path("type").asText();
        if ("ack".equals(type) || "error".equals(type)) {
            CompletableFuture<JsonNode> answer = pending.get(event.path("id").asText());
            if (answer != null) {
                answer.complete(event);
            }
        }
    }

    private static String describe(List<JsonNode> events) {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < events.size(); i++) {
            text.append("  [").append(i).append("] ").append(events.get(i)).append('\n');
        }
        return text.isEmpty() ? "  (none)" : text.toString();
    }

    private static Map<String, Object> map(Object... keysAndValues) {
        Map<String, Object> map = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            map.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return map;
    }

    /** The driver answered a command with an error event. */
    public static final class DriverException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        DriverException(String command, String message) {
            super("realtime-js driver rejected '" + command + "': " + message);
        }
    }
}
