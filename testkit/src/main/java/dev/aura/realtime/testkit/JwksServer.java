package dev.aura.realtime.testkit;

import com.nimbusds.jose.jwk.JWK;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A JWKS endpoint on 127.0.0.1 (the JDK's HTTP server) publishing the public parts of the keys
 * a test sets, as a platform's {@code /.well-known/jwks.json} does; {@link #publish} swaps the set
 * (rotation: the new key beside the old, then the old removed) and {@link #fetches} counts requests.
 */
public final class JwksServer implements AutoCloseable {
    private final HttpServer server;
    private final AtomicReference<String> body = new AtomicReference<>("{\"keys\":[]}");
    private final AtomicInteger fetches = new AtomicInteger();

    private JwksServer(HttpServer server) {
        this.server = server;
    }

    public static JwksServer start(List<? extends JWK> keys) {
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            JwksServer s = new JwksServer(server);
            s.publish(keys);
            server.createContext("/.well-known/jwks.json", exchange -> {
                s.fetches.incrementAndGet();
                byte[] bytes = s.body.get().getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().add("Content-Type", "application/json");
                exchange.sendResponseHeaders(200, bytes.length);
                exchange.getResponseBody().write(bytes);
                exchange.close();
            });
            server.start();
            return s;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Publishes the public parts of {@code keys} from now on. */
    public void publish(List<? extends JWK> keys) {
        body.set(TestSigningKeys.publicJwks(keys));
    }

    public String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/.well-known/jwks.json";
    }

    public int fetches() {
        return fetches.get();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
