package dev.aura.realtime.front.transport;

import dev.aura.realtime.front.metrics.FrontMetrics;
import io.netty.channel.Channel;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Connections refused at connect (no apikey, a refused apikey, a project at its connection
 * limit), so that an operator sees them (issue 40): counted per reason in
 * {@code aura_ws_connections_refused_total{reason}} and logged at INFO as
 * {@code [ConnectionRefused] <Code>: <message> (remote <address>, <endpoint>)} (the code is
 * prefixed where the client's text has none, e.g. {@code ApiKeyMissing: API key is missing}). At most one line
 * per reason and second: a client retrying with a stale key every second, or a flood of bad keys,
 * does not fill the log; the next line of that reason says how many were left out. The reasons
 * are a closed list of codes (the token refusals' codes, {@link #API_KEY_MISSING},
 * {@link #CONNECTION_RATE_LIMIT}), so the counters and this map stay small. Thread-safe (every
 * event loop).
 */
final class ConnectRefusals {
    /** The reason of a connection without an apikey. */
    static final String API_KEY_MISSING = "ApiKeyMissing";
    /** The reason of a connection over its project's {@code max_concurrent_users}. */
    static final String CONNECTION_RATE_LIMIT = "ConnectionRateLimitReached";

    private static final Logger log = LoggerFactory.getLogger(ConnectRefusals.class);
    private static final long LOG_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** One reason's log window (guarded by itself). */
    private static final class Window {
        private boolean logged;
        private long lastNanos;
        private long left;
    }

    private final FrontMetrics metrics;
    private final LongSupplier nanoTime;
    private final Map<String, Window> windows = new ConcurrentHashMap<>();

    ConnectRefusals(FrontMetrics metrics, LongSupplier nanoTime) {
        this.metrics = metrics;
        this.nanoTime = nanoTime;
    }

    /**
     * Counts and logs one refusal.
     *
     * @param code the reason's code, e.g. {@code InvalidJWTToken}
     * @param reason the text the client is given, e.g. {@code InvalidJWTToken: Token has expired 3 seconds ago}
     * @param endpoint the path refused, e.g. {@code /realtime/v1/websocket}
     */
    void refused(Channel channel, String code, String reason, String endpoint) {
        metrics.connectionRefused(code);
        Window window = windows.computeIfAbsent(code, c -> new Window());
        long leftOut;
        synchronized (window) {
            long now = nanoTime.getAsLong();
            if (window.logged && now - window.lastNanos < LOG_INTERVAL_NANOS) {
                window.left++;
                return;
            }
            leftOut = window.left;
            window.left = 0;
            window.lastNanos = now;
            window.logged = true;
        }
        log.info(
                "[ConnectionRefused] {} (remote {}, {}){}",
                reason.startsWith(code + ":") ? reason : code + ": " + reason,
                address(channel.remoteAddress()),
                endpoint,
                leftOut == 0 ? "" : "; " + leftOut + " more " + code + " refusals since the last such line");
    }

    private static String address(SocketAddress remote) {
        return remote instanceof InetSocketAddress inet && inet.getAddress() != null
                ? inet.getAddress().getHostAddress()
                : String.valueOf(remote);
    }
}
