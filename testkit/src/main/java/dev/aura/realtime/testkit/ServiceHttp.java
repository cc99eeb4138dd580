package dev.aura.realtime.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.MissingNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/**
 * The HTTP side of a binary under test on 127.0.0.1: {@code /health} and {@code /metrics} of a
 * cdc-worker ({@code CDC_HTTP_PORT}) or a ws-front ({@code WS_PORT}), and waiting for a health
 * condition. A service that does not answer (not started yet, killed) is not an error here:
 * {@link #health()} says {@code unreachable: ...} and the awaits keep polling.
 *
 * <p>Thread-safe; one {@link HttpClient} per instance.
 */
public final class ServiceHttp {
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(5);
    private static final Duration POLL = Duration.ofMillis(50);

    private final int port;
    private final HttpClient http = HttpClient.newHttpClient();
    private final ObjectMapper json = new ObjectMapper();

    public ServiceHttp(int port) {
        this.port = port;
    }

    public int port() {
        return port;
    }

    /** Returns the body of {@code GET http://127.0.0.1:<port><path>}, or {@code "unreachable: <why>"}. */
    public String get(String path) {
        try {
            return http.send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                                    .timeout(REQUEST_TIMEOUT)
                                    .build(),
                            HttpResponse.BodyHandlers.ofString())
                    .body();
        } catch (IOException e) {
            return "unreachable: " + e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unreachable: interrupted";
        }
    }

    /** Returns the {@code /health} body, or {@code "unreachable: <why>"}. */
    public String health() {
        return get("/health");
    }

    /** Returns {@code /health} as JSON; a {@link MissingNode} when unreachable or not JSON. */
    public JsonNode healthJson() {
        return parse(health());
    }

    /** Returns the Prometheus text of {@code /metrics}, or {@code "unreachable: <why>"}. */
    public String metrics() {
        return get("/metrics");
    }

    /** Returns the sum of every sample of metric {@code name} (all tag sets); 0 when absent. */
    public double metric(String name) {
        double sum = 0;
        for (String line : metrics().split("\n")) {
            if (line.startsWith(name + " ") || line.startsWith(name + "{")) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    /**
     * Waits until the {@code /health} body, with spaces removed, contains {@code fragment} (e.g.
     * {@code "cdc_active":true}).
     *
     * @param logOf the service whose log tail the failure shows; may be null
     * @return the matching body
     * @throws AssertionError after {@code timeout}, with the last body and the log tail
     */
    public String awaitHealth(String fragment, Duration timeout, ServiceProcess logOf) {
        return awaitHealthBody(
                body -> body.replace(" ", "").contains(fragment), "contained " + fragment, timeout, logOf);
    }

    /**
     * Waits until the {@code /health} JSON satisfies {@code condition}.
     *
     * @param logOf the service whose log tail the failure shows; may be null
     * @return the matching health document
     * @throws AssertionError after {@code timeout}, with the last document and the log tail
     */
    public JsonNode awaitHealth(Predicate<JsonNode> condition, Duration timeout, ServiceProcess logOf) {
        return parse(awaitHealthBody(body -> condition.test(parse(body)), "met the condition", timeout, logOf));
    }

    private String awaitHealthBody(Predicate<String> done, String what, Duration timeout, ServiceProcess logOf) {
        AtomicReference<String> last = new AtomicReference<>("");
        try {
            return Awaitility.await()
                    .atMost(timeout)
                    .pollDelay(Duration.ZERO)
                    .pollInterval(POLL)
                    .until(
                            () -> {
                                last.set(health());
                                return last.get();
                            },
                            done);
        } catch (ConditionTimeoutException e) {
            throw new AssertionError(
                    "port " + port + " /health never " + what + " within " + timeout + "; last: " + last.get()
                            + tail(logOf),
                    e);
        }
    }

    private JsonNode parse(String body) {
        try {
            return json.readTree(body);
        } catch (IOException notJson) {
            return MissingNode.getInstance();
        }
    }

    private static String tail(ServiceProcess logOf) {
        return logOf == null ? "" : "\n--- tail of " + logOf.logFile() + " ---\n" + logOf.logTail(40);
    }
}
