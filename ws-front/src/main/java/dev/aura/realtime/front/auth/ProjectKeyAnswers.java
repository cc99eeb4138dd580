package dev.aura.realtime.front.auth;

import dev.aura.realtime.common.auth.AuthException;
import dev.aura.realtime.common.wire.ProjectKeys;
import dev.aura.realtime.front.log.LogCode;
import dev.aura.realtime.front.relay.ProjectKeysSource;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.BiFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A cdc-worker's answers about one kind of thing (API keys by hash, or token issuers by
 * {@code iss}), kept so that a connect or join asks at most once per {@code ttl}
 * ({@code PROJECT_KEYS_CACHE_SECONDS}): the bound within which a revoked key or a changed issuer
 * takes effect. Questions about the same thing while one is under way share its answer. A "no such
 * key/issuer" answer is kept {@link #NEGATIVE_TTL_MS} at most, so a new key works within seconds.
 * When no cdc-worker answers, the last found answer is used for at most {@link #STALE_FACTOR}
 * times the ttl (a worker outage does not stop every connection at once), else the question fails
 * with {@code AuthUnavailable}. At most {@link #MAX_ENTRIES} things are kept (least recently used
 * dropped) and {@link #MAX_IN_FLIGHT} questions asked at once: random keys sent in a flood cost
 * bounded memory and bounded questions. Thread-safe.
 *
 * @param <V> what a found answer is turned into once, from the thing's key and the answer (claims,
 *     parsed keys); null for none
 */
final class ProjectKeyAnswers<V> {
    private static final Logger log = LoggerFactory.getLogger(ProjectKeyAnswers.class);
    static final long NEGATIVE_TTL_MS = 5_000;
    static final int STALE_FACTOR = 10;
    static final int MAX_ENTRIES = 10_000;
    static final int MAX_IN_FLIGHT = 256;

    /** An answer and what it was turned into. */
    record Known<V>(ProjectKeys.Answer answer, V value) {}

    private static final class Slot<V> {
        Known<V> known;
        long atMs;
        long refreshedAtMs = Long.MIN_VALUE;
        CompletableFuture<Known<V>> inFlight;
    }

    private final ProjectKeysSource source;
    private final BiFunction<String, ProjectKeys.Answer, V> convert;
    private final Clock clock;
    private final long ttlMs;
    private final String what;
    private final Map<String, Slot<V>> entries = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Slot<V>> eldest) {
            return size() > MAX_ENTRIES && eldest.getValue().inFlight == null;
        }
    };
    private int inFlight;
    private volatile long loggedAtMs;

    /** @param what {@code "API key"} or {@code "token issuer"}, for messages */
    ProjectKeyAnswers(
            ProjectKeysSource source,
            BiFunction<String, ProjectKeys.Answer, V> convert,
            Clock clock,
            long ttlMs,
            String what) {
        this.source = source;
        this.convert = convert;
        this.clock = clock;
        this.ttlMs = ttlMs;
        this.what = what;
    }

    /**
     * The answer about {@code key}: kept, or asked with {@code question}.
     *
     * @param ask whether to ask even if a kept answer is fresh (a revocation sweep, a rotated key)
     */
    CompletableFuture<Known<V>> get(String key, ProjectKeys.Request question, boolean ask) {
        long now = clock.millis();
        CompletableFuture<Known<V>> started;
        Known<V> stale;
        synchronized (entries) {
            Slot<V> e = entries.get(key);
            if (e != null && e.inFlight != null) {
                return e.inFlight;
            }
            if (e != null && e.known != null && !ask && now - e.atMs < ttl(e.known)) {
                return CompletableFuture.completedFuture(e.known);
            }
            stale = e == null ? null : usable(e, now);
            if (inFlight >= MAX_IN_FLIGHT) {
                return stale != null
                        ? CompletableFuture.completedFuture(stale)
                        : CompletableFuture.failedFuture(AuthException.unavailable(what));
            }
            if (e == null) {
                e = new Slot<>();
                entries.put(key, e);
            }
            inFlight++;
            started = new CompletableFuture<>();
            e.inFlight = started;
            if (ask) {
                e.refreshedAtMs = now;
            }
        }
        source.ask(question).whenComplete((answer, err) -> settle(key, started, answer, err));
        return started;
    }

    /** When {@code key} was last asked with {@code ask} (a rotated key's refresh), for rate limits. */
    long refreshedAtMs(String key) {
        synchronized (entries) {
            Slot<V> e = entries.get(key);
            return e == null ? Long.MIN_VALUE : e.refreshedAtMs;
        }
    }

    private void settle(String key, CompletableFuture<Known<V>> started, ProjectKeys.Answer answer, Throwable err) {
        Known<V> known = null;
        Throwable failure = err;
        if (failure == null) {
            try {
                known = new Known<>(answer, answer.found() ? convert.apply(key, answer) : null);
            } catch (RuntimeException e) {
                failure = e;
            }
        }
        long now = clock.millis();
        Known<V> result;
        synchronized (entries) {
            inFlight--;
            Slot<V> e = entries.get(key);
            if (e == null) { // dropped meanwhile: keep the answer anyway
                e = new Slot<>();
                entries.put(key, e);
            }
            e.inFlight = null;
            if (known != null) {
                e.known = known;
                e.atMs = now;
            }
            result = known != null ? known : usable(e, now);
        }
        if (failure != null && now - loggedAtMs >= 1_000) { // one line a second at most
            loggedAtMs = now;
            LogCode.ProjectKeysUnavailable.warn(log, "no cdc-worker answered about a {}: {}", what, failure.toString());
        }
        if (result != null) {
            started.complete(result);
        } else {
            started.completeExceptionally(new CompletionException(AuthException.unavailable(what)));
        }
    }

    /** The kept answer of {@code e} while it may stand in for a failed question, else null. */
    private Known<V> usable(Slot<V> e, long now) {
        return e.known != null && e.known.answer().found() && now - e.atMs < STALE_FACTOR * ttlMs ? e.known : null;
    }

    private long ttl(Known<V> known) {
        return known.answer().found() ? ttlMs : Math.min(ttlMs, NEGATIVE_TTL_MS);
    }
}
