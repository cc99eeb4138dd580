package dev.aura.realtime.cdc.keys;

import static org.assertj.core.api.Assertions.assertThat;

import com.nimbusds.jose.jwk.ECKey;
import com.sun.net.httpserver.HttpServer;
import dev.aura.realtime.testkit.JwksServer;
import dev.aura.realtime.testkit.TestSigningKeys;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link JwksFetcher} against real sockets on 127.0.0.1: a good JWKS, then servers that never
 * answer, dribble, never end, lie about their length, answer 404 or a private key; one fetch at a
 * time per issuer, at most one per refresh interval; the private-address guard.
 */
class JwksFetcherTest {
    private static final Duration TIMEOUT = Duration.ofMillis(500);
    private static final long MAX = 16 * 1024;

    private long now = 1_000_000;
    private JwksFetcher fetcher = fetcher(true);
    private ServerSocket raw;
    private final AtomicInteger accepted = new AtomicInteger();
    private final AtomicLong written = new AtomicLong();

    private JwksFetcher fetcher(boolean privateAddresses) {
        return new JwksFetcher(
                new JwksFetcher.Settings(
                        TIMEOUT, MAX, Duration.ofSeconds(60), Duration.ofSeconds(10), privateAddresses),
                () -> now);
    }

    @AfterEach
    void close() throws IOException {
        fetcher.close();
        if (raw != null) {
            raw.close();
        }
    }

    /** A raw HTTP server: reads a request head, then {@code answer} writes whatever it likes. */
    private URI rawServer(Answer answer) throws IOException {
        raw = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().start(() -> {
            while (!raw.isClosed()) {
                try {
                    Socket s = raw.accept();
                    accepted.incrementAndGet();
                    Thread.ofVirtual().start(() -> {
                        try (s) {
                            InputStream in = s.getInputStream();
                            int matched = 0;
                            while (matched < 4) {
                                int c = in.read();
                                if (c < 0) {
                                    return;
                                }
                                matched = c == "\r\n\r\n".charAt(matched) ? matched + 1 : (c == '\r' ? 1 : 0);
                            }
                            answer.write(s.getOutputStream(), in);
                        } catch (IOException | InterruptedException ignored) {
                            // the fetcher hung up: what the test wants
                        }
                    });
                } catch (IOException e) {
                    return;
                }
            }
        });
        return URI.create("http://127.0.0.1:" + raw.getLocalPort() + "/jwks.json");
    }

    private interface Answer {
        void write(OutputStream out, InputStream in) throws IOException, InterruptedException;
    }

    private JwksFetcher.Keys get(URI url) {
        return fetcher.keys("issuer-1", url, false).join();
    }

    @Test
    void aGoodJwksIsFetchedOnceAndKeptPublicOnly() {
        ECKey key = TestSigningKeys.es256("k-1");
        try (JwksServer server = JwksServer.start(List.of(key))) {
            JwksFetcher.Keys k = get(URI.create(server.url()));
            assertThat(k.error()).isNull();
            assertThat(k.keys().getKeyByKeyId("k-1").isPrivate()).isFalse();
            get(URI.create(server.url()));
            assertThat(server.fetches()).isEqualTo(1);
            now += 61_000; // past the cache time
            get(URI.create(server.url()));
            assertThat(server.fetches()).isEqualTo(2);
        }
    }

    @Test
    void aServerThatNeverAnswersCostsOneTimeoutAndOneConnectionPerRefreshInterval() throws Exception {
        URI url = rawServer((out, in) -> in.read());
        long t0 = System.nanoTime();
        List<CompletableFuture<JwksFetcher.Keys>> asks = List.of(
                fetcher.keys("issuer-1", url, false),
                fetcher.keys("issuer-1", url, true),
                fetcher.keys("issuer-1", url, false));
        for (CompletableFuture<JwksFetcher.Keys> f : asks) {
            JwksFetcher.Keys k = f.join();
            assertThat(k.keys()).isNull();
            assertThat(k.error()).isEqualTo("no complete answer within 500 ms");
        }
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(3));
        assertThat(accepted.get()).as("one fetch for the three questions").isEqualTo(1);
        assertThat(get(url).error())
                .as("within the refresh interval: the known answer")
                .isNotNull();
        assertThat(accepted.get()).isEqualTo(1);
        now += 10_000;
        get(url);
        assertThat(accepted.get()).isEqualTo(2);
    }

    @Test
    void aDribblingBodyIsAbandonedAtTheDeadline() throws Exception {
        URI url = rawServer((out, in) -> {
            out.write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n{".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            while (true) {
                Thread.sleep(50);
                out.write(' ');
                out.flush();
            }
        });
        long t0 = System.nanoTime();
        assertThat(get(url).error()).isEqualTo("no complete answer within 500 ms");
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(2));
    }

    @Test
    void anEndlessBodyIsReadUpToTheLimitOnly() throws Exception {
        URI url = rawServer((out, in) -> {
            out.write("HTTP/1.1 200 OK\r\n\r\n{\"keys\":[".getBytes(StandardCharsets.US_ASCII));
            byte[] chunk = "{\"kty\":\"EC\"},".repeat(100).getBytes(StandardCharsets.US_ASCII);
            while (true) {
                out.write(chunk);
                written.addAndGet(chunk.length);
            }
        });
        assertThat(get(url).error()).isEqualTo("the body is larger than 16384 bytes");
        assertThat(written.get())
                .as("the writer is stopped by the closed connection")
                .isLessThan(64L << 20);
    }

    @Test
    void aDeclaredLengthOverTheLimitA404AndNonJwksBodiesAreRefusedWithOurWords() throws Exception {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/big", ex -> {
            ex.sendResponseHeaders(200, MAX + 1);
            ex.getResponseBody().flush();
            try {
                Thread.sleep(1_000); // the fetcher must refuse from the header, not wait for the body
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            ex.close();
        });
        server.createContext("/missing", ex -> {
            byte[] body = "<html>secret internal page</html>".getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(404, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        server.createContext("/html", ex -> {
            byte[] body = "<html>secret internal page</html>".getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        server.createContext("/symmetric", ex -> {
            byte[] body = "{\"keys\":[{\"kty\":\"oct\",\"k\":\"c2VjcmV0\"}]}".getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        server.setExecutor(java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor());
        server.start();
        try {
            String base = "http://127.0.0.1:" + server.getAddress().getPort();
            assertThat(fetcher.keys("a", URI.create(base + "/big"), false)
                            .join()
                            .error())
                    .isEqualTo("the body is larger than 16384 bytes");
            assertThat(fetcher.keys("b", URI.create(base + "/missing"), false)
                            .join()
                            .error())
                    .isEqualTo("the answer was HTTP 404, not 200");
            assertThat(fetcher.keys("c", URI.create(base + "/html"), false)
                            .join()
                            .error())
                    .isEqualTo("the body is not a JWKS ({\"keys\":[...]})");
            assertThat(fetcher.keys("d", URI.create(base + "/symmetric"), false)
                            .join()
                            .error())
                    .isEqualTo("the JWKS holds no EC, RSA or OKP public key");
        } finally {
            server.stop(0);
        }
    }

    @Test
    void privateAddressesAreRefusedUnlessAllowed() {
        fetcher.close();
        fetcher = fetcher(false);
        ECKey key = TestSigningKeys.es256("k-1");
        try (JwksServer server = JwksServer.start(List.of(key))) {
            assertThat(get(URI.create(server.url())).error())
                    .isEqualTo("the host resolves to a non-public address (PROJECT_JWKS_PRIVATE_ADDRESSES is off)");
            assertThat(server.fetches()).isZero();
        }
        for (String host : List.of(
                "10.1.2.3",
                "172.16.0.1",
                "192.168.1.1",
                "169.254.169.254",
                "100.64.0.1",
                "0.0.0.0",
                "::1",
                "fd00::1",
                "fe80::1")) {
            assertThat(PublicAddresses.isPublic(address(host))).as(host).isFalse();
        }
        assertThat(PublicAddresses.isPublic(address("93.184.216.34"))).isTrue();
        assertThat(PublicAddresses.isPublic(address("2606:2800:220:1:248:1893:25c8:1946")))
                .isTrue();
    }

    private static InetAddress address(String literal) {
        try {
            return InetAddress.getByName(literal);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
