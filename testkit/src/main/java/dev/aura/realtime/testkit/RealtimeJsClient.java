package dev.aura.realtime.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The real {@code @supabase/realtime-js} client, driven through {@code e2e/js/driver.mjs} in a
 * Node child process: typed commands ({@link #connect}, {@link #channel}, {@link #subscribe},
 * {@link #sendBroadcast}, {@link #track}, ...) and waiting for what the client reports.
 *
 * <p>Every line the driver prints is an event (postgres_changes, broadcast, presence, system,
 * status, socket, ..., and the acks and errors answering commands), recorded in order in
 * {@link #events()}. The line protocol and the process live in {@link RealtimeJsDriver}, the
 * event log and its waits in {@link RealtimeJsEvents}.
 *
 * <p>Threads: one daemon thread reads the driver's stdout; the driver's stderr (realtime-js logs)
 * goes to {@link #logFile()} under {@code target/realtime-js/}. Methods may be called from any
 * thread.
 */
public final class RealtimeJsClient implements AutoCloseable {
    /** How long a command waits for its ack. */
    public static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(20);

    private static final ObjectMapper JSON = new ObjectMapper();

    private final RealtimeJsDriver driver;
    private final RealtimeJsEvents events;

    private RealtimeJsClient(RealtimeJsDriver driver) {
        this.driver = driver;
        this.events = driver.events();
    }

    /**
     * Starts {@code node e2e/js/driver.mjs} ({@code $NODE_BIN} or {@code node} on PATH) and waits
     * until it answers a {@code ping}.
     *
     * @throws IllegalStateException if Node or {@code e2e/js/node_modules} is missing, or the driver
     *     does not answer within 20 s
     */
    public static RealtimeJsClient start() {
        RealtimeJsClient client = new RealtimeJsClient(RealtimeJsDriver.start());
        try {
            client.call("ping", Map.of());
        } catch (RuntimeException | AssertionError e) {
            client.close();
            throw new IllegalStateException(
                    "realtime-js driver did not start: " + e.getMessage() + "\n--- tail of " + client.logFile()
                            + " ---\n" + Commands.tail(client.logFile(), 30),
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
        return driver.call(command, COMMAND_TIMEOUT);
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

    /** {@code channel.send} with {@code persist: true} (a private channel's message stored for replay). */
    public String sendPersisted(String channel, String event, Object payload) {
        return call("send", map("channel", channel, "event", event, "payload", payload, "persist", true))
                .asText();
    }

    /**
     * {@code channel.send({type: 'broadcast', event, payload, persist})} with {@code persist}
     * {@code true} or e.g. {@code Map.of("ttl", 5)}; returns what it resolved to.
     */
    public String sendPersisted(String channel, String event, Object payload, Object persist) {
        return call("send", map("channel", channel, "event", event, "payload", payload, "persist", persist))
                .asText();
    }

    /** {@code channel.httpSend(event, payload, {persist})}, {@code persist} as for {@link #sendPersisted(String, String, Object, Object)}. */
    public JsonNode httpSendPersisted(String channel, String event, Object payload, Object persist) {
        return call("httpSend", map("channel", channel, "event", event, "payload", payload, "persist", persist));
    }

    /** {@code channel.httpSend(event, payload, {persist: true})}; returns its result object. */
    public JsonNode httpSendPersisted(String channel, String event, Object payload) {
        return call("httpSend", map("channel", channel, "event", event, "payload", payload, "persist", true));
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
        return events.snapshot();
    }

    /** Returns how many events were received so far; pass it to {@link #awaitEvent(int, Predicate, Duration)}. */
    public int eventCount() {
        return events.count();
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
        return events.await(fromIndex, predicate, timeout);
    }

    /**
     * As {@link #awaitEvent(int, Predicate, Duration)}, returning the matching event's index: wait
     * for what must follow it from {@code index + 1} (a count taken after the wait can already
     * include the follower).
     */
    public int awaitEventIndex(int fromIndex, Predicate<JsonNode> predicate, Duration timeout) {
        return events.awaitIndex(fromIndex, predicate, timeout);
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
        events.assertNone(fromIndex, predicate, window);
    }

    /** Returns the driver's stderr log (realtime-js logger output and driver diagnostics). */
    public Path logFile() {
        return driver.logFile();
    }

    /** Kills the Node process. Idempotent. */
    @Override
    public void close() {
        driver.close();
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
