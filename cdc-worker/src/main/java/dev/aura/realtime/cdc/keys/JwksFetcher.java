package dev.aura.realtime.cdc.keys;

import com.nimbusds.jose.jwk.JWKSet;
import dev.aura.realtime.cdc.failure.LogCode;
import dev.aura.realtime.common.auth.IssuerKeys;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.UnknownHostException;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.text.ParseException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fetches and caches the JWKS URLs of projects' token issuers (docs/security.md "Each project's
 * own keys"), so that one project's broken URL costs only that project:
 *
 * <ul>
 *   <li>each fetch has one deadline for everything (name resolution, connect, headers, body),
 *       after which it is abandoned and its connection cancelled: a server that never answers or
 *       dribbles a byte a second holds nothing longer than {@code PROJECT_JWKS_TIMEOUT_MS};
 *   <li>a body is read up to {@code PROJECT_JWKS_MAX_BYTES} and abandoned there (also when its
 *       {@code Content-Length} says more), redirects are not followed, only HTTP 200 is read;
 *   <li>per issuer at most one fetch is in flight (every question about it waits for that one)
 *       and fetches start at most once per {@code AURA_JWT_JWKS_MIN_REFRESH_SECONDS}, for an
 *       expired set ({@code AURA_JWT_JWKS_CACHE_SECONDS}) or a token naming an unknown
 *       {@code kid} alike; in between, the cached answer (keys, or why there are none) is given;
 *   <li>the fetch is asynchronous (the JDK's HTTP client; name resolution on a virtual thread), so
 *       no thread of the worker waits on a provider;
 *   <li>unless {@code PROJECT_JWKS_PRIVATE_ADDRESSES}, a URL whose host resolves to a loopback,
 *       private, link-local, shared or multicast address is refused, so a project cannot make the
 *       worker fetch from inside the network (the HTTP client resolves the name again when it
 *       connects: a name that changes its answer in between is not caught).
 * </ul>
 *
 * A failed fetch keeps the keys of the last good one until they expire; errors are the fetcher's
 * own words (never the provider's text). Thread-safe.
 */
public final class JwksFetcher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(JwksFetcher.class);

    /**
     * @param timeout {@code PROJECT_JWKS_TIMEOUT_MS}
     * @param maxBytes {@code PROJECT_JWKS_MAX_BYTES}
     * @param cacheTtl {@code AURA_JWT_JWKS_CACHE_SECONDS}
     * @param minRefresh {@code AURA_JWT_JWKS_MIN_REFRESH_SECONDS}
     * @param privateAddresses {@code PROJECT_JWKS_PRIVATE_ADDRESSES}
     */
    public record Settings(
            Duration timeout, long maxBytes, Duration cacheTtl, Duration minRefresh, boolean privateAddresses) {}

    /** What is known of one issuer's URL: its public keys (null when none), and why not. */
    public record Keys(JWKSet keys, String error) {}

    /** One issuer's URL. Guarded by its own monitor. */
    private static final class Entry {
        JWKSet keys;
        long fetchedAtMs;
        long attemptedAtMs = Long.MIN_VALUE;
        String error;
        CompletableFuture<Keys> inFlight;
        long usedAtMs;
    }

    private final Settings settings;
    private final LongSupplier millis;
    private final HttpClient http;
    private final ExecutorService resolver = Executors.newVirtualThreadPerTaskExecutor();
    private final Map<String, Entry> entries = new ConcurrentHashMap<>();
    private volatile long sweptAtMs;

    public JwksFetcher(Settings settings, LongSupplier millis) {
        this.settings = settings;
        this.millis = millis;
        this.http = HttpClient.newBuilder()
                .connectTimeout(settings.timeout())
                .followRedirects(HttpClient.Redirect.NEVER)
                .build();
    }

    /**
     * The keys of issuer {@code issuerId}'s {@code url}: the cached ones while fresh (and
     * {@code refresh} is false), else those of a fetch if one may start now or is under way, else
     * what is known.
     */
    public CompletableFuture<Keys> keys(String issuerId, URI url, boolean refresh) {
        long now = millis.getAsLong();
        sweep(now);
        Entry e = entries.computeIfAbsent(issuerId + " " + url, k -> new Entry());
        CompletableFuture<Keys> started;
        synchronized (e) {
            e.usedAtMs = now;
            boolean fresh =
                    e.keys != null && now - e.fetchedAtMs < settings.cacheTtl().toMillis();
            if (e.inFlight != null) {
                return fresh && !refresh ? CompletableFuture.completedFuture(current(e, now)) : e.inFlight;
            }
            boolean allowed = e.attemptedAtMs == Long.MIN_VALUE
                    || now - e.attemptedAtMs >= settings.minRefresh().toMillis();
            if ((fresh && !refresh) || !allowed) {
                return CompletableFuture.completedFuture(current(e, now));
            }
            e.attemptedAtMs = now;
            started = new CompletableFuture<>();
            e.inFlight = started;
        }
        fetch(url).whenComplete((set, err) -> started.complete(record(e, issuerId, url, set, err)));
        return started;
    }

    private Keys current(Entry e, long now) {
        boolean fresh =
                e.keys != null && now - e.fetchedAtMs < settings.cacheTtl().toMillis();
        return new Keys(fresh ? e.keys : null, fresh ? null : e.error);
    }

    private Keys record(Entry e, String issuerId, URI url, JWKSet set, Throwable err) {
        long now = millis.getAsLong();
        synchronized (e) {
            e.inFlight = null;
            if (err == null) {
                e.keys = set;
                e.fetchedAtMs = now;
                e.error = null;
            } else {
                e.error = describe(err);
                log.warn(
                        "[{}] issuer {}: JWKS URL {} failed ({}); its tokens are refused until a fetch succeeds",
                        LogCode.PROJECT_JWKS_FETCH_FAILED,
                        issuerId,
                        url,
                        e.error);
            }
            return current(e, now);
        }
    }

    private CompletableFuture<JWKSet> fetch(URI url) {
        CompletableFuture<JWKSet> out = new CompletableFuture<>();
        AtomicReference<CompletableFuture<?>> exchange = new AtomicReference<>();
        try {
            resolver.execute(() -> {
                try {
                    if (!settings.privateAddresses()) {
                        PublicAddresses.require(url.getHost());
                    }
                    CompletableFuture<HttpResponse<byte[]>> send = http.sendAsync(
                            HttpRequest.newBuilder(url)
                                    .timeout(settings.timeout())
                                    .header("Accept", "application/json")
                                    .GET()
                                    .build(),
                            info -> LimitedBody.of(info, settings.maxBytes()));
                    exchange.set(send);
                    if (out.isDone()) {
                        send.cancel(true); // the deadline passed while the name was resolved
                    }
                    send.whenComplete((res, err) -> {
                        if (err != null) {
                            out.completeExceptionally(err);
                        } else {
                            try {
                                out.complete(parse(res.body()));
                            } catch (IOException e) {
                                out.completeExceptionally(e);
                            }
                        }
                    });
                } catch (IOException | RuntimeException e) {
                    out.completeExceptionally(e);
                }
            });
        } catch (RuntimeException e) { // closed
            out.completeExceptionally(e);
        }
        CompletableFuture.delayedExecutor(settings.timeout().toMillis(), TimeUnit.MILLISECONDS)
                .execute(() -> {
                    if (out.completeExceptionally(new TimeoutException())) {
                        CompletableFuture<?> running = exchange.get();
                        if (running != null) {
                            running.cancel(true); // closes the connection: no body is read further
                        }
                    }
                });
        return out;
    }

    private static JWKSet parse(byte[] body) throws IOException {
        JWKSet set;
        try {
            set = JWKSet.parse(new String(body, StandardCharsets.UTF_8));
        } catch (ParseException | RuntimeException e) {
            throw new IOException("the body is not a JWKS ({\"keys\":[...]})");
        }
        JWKSet usable = IssuerKeys.publicKeys(set);
        if (usable.isEmpty()) {
            throw new IOException("the JWKS holds no EC, RSA or OKP public key");
        }
        return usable;
    }

    /** The fetcher's own words for a failure: never the provider's text. */
    private String describe(Throwable err) {
        Throwable t = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof LimitedBody.Refused || c instanceof PublicAddresses.NotPublic) {
                return c.getMessage();
            }
        }
        if (t instanceof TimeoutException || t instanceof java.net.http.HttpTimeoutException) {
            return t instanceof HttpConnectTimeoutException
                    ? "no connection within " + settings.timeout().toMillis() + " ms"
                    : "no complete answer within " + settings.timeout().toMillis() + " ms";
        }
        if (t instanceof UnknownHostException) {
            return "unknown host";
        }
        if (t instanceof ConnectException) {
            return "connection refused";
        }
        if (t instanceof IOException && t.getMessage() != null && t.getMessage().startsWith("the ")) {
            return t.getMessage(); // ours, from parse
        }
        return "the request failed (" + t.getClass().getSimpleName() + ")";
    }

    /** Forgets URLs no question asked about for ten cache periods (removed issuers, changed URLs). */
    private void sweep(long now) {
        long ttl = settings.cacheTtl().toMillis();
        if (now - sweptAtMs < ttl) {
            return;
        }
        sweptAtMs = now;
        entries.values().removeIf(e -> {
            synchronized (e) {
                return e.inFlight == null && now - e.usedAtMs > 10 * ttl;
            }
        });
    }

    @Override
    public void close() {
        resolver.shutdownNow();
        http.shutdownNow();
    }
}
