package dev.aura.realtime.front.auth;

import dev.aura.realtime.common.auth.ApiKeys;
import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.front.session.ClientSession;
import dev.aura.realtime.front.session.Sessions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes the connections whose {@code apikey} is a project API key revoked since they connected
 * (docs/security.md "Each project's own keys"): every {@code PROJECT_KEYS_CACHE_SECONDS}, each
 * distinct key of this replica's open connections is asked about once; the connections of a key
 * no longer valid get {@code system} {@code InvalidAPIKey: ...} on each channel and a close
 * (realtime-js reconnects, and is refused). A key no cdc-worker answers about is kept. So a live
 * socket of a revoked key closes within twice that period at most. One daemon thread.
 */
public final class RevokedKeys implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RevokedKeys.class);

    private final Credentials credentials;
    private final Sessions sessions;
    private final Duration every;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "revoked-api-keys");
        t.setDaemon(true);
        return t;
    });

    public RevokedKeys(Credentials credentials, Sessions sessions, Duration every) {
        this.credentials = credentials;
        this.sessions = sessions;
        this.every = every;
    }

    public void start() {
        timer.scheduleWithFixedDelay(this::sweep, every.toMillis(), every.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** One pass: asks about every key in use, closes the connections of the revoked ones. */
    void sweep() {
        Map<String, List<ClientSession>> byKey = new HashMap<>();
        for (ClientSession s : sessions.snapshot()) {
            Claims claims = s.apiKeyClaims();
            if (claims.apiKeyHash() != null) {
                byKey.computeIfAbsent(claims.apiKeyHash(), k -> new ArrayList<>())
                        .add(s);
            }
        }
        String reason = ApiKeys.invalid().reason();
        byKey.forEach((hash, open) -> credentials.stillValid(hash).thenAccept(valid -> {
            if (!valid) {
                log.info(
                        "closing {} connection(s) of a revoked API key of project {}",
                        open.size(),
                        open.get(0).apiKeyClaims().projectId());
                open.forEach(s -> s.disconnect(reason));
            }
        }));
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
