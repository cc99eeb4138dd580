package dev.aura.realtime.front.testing;

import dev.aura.realtime.front.FrontApp;
import dev.aura.realtime.testkit.NatsServer;
import java.net.http.HttpClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * In-process ws-front replicas on a private nats-server, all configured by
 * {@link FrontFixture#config} with the same overrides, and the test clients connected to them.
 * Closing closes the clients, every replica (in start order), then the server;
 * {@link FrontApp#close} is idempotent, so a test may close a replica itself first.
 *
 * <p>Not thread-safe: the test thread starts, connects and closes.
 */
public final class FrontCluster implements AutoCloseable {
    private final NatsServer nats;
    private final Map<String, String> overrides;
    private final List<FrontApp> replicas = new ArrayList<>();
    private final HttpClient http = HttpClient.newHttpClient();
    private final List<WsTestClient> clients = new ArrayList<>();

    private FrontCluster(NatsServer nats, Map<String, String> overrides) {
        this.nats = nats;
        this.overrides = Map.copyOf(overrides);
    }

    /** Starts a nats-server on a free port; no replica yet. */
    public static FrontCluster start(Map<String, String> overrides) {
        return new FrontCluster(NatsServer.start(), overrides);
    }

    public NatsServer nats() {
        return nats;
    }

    /** Starts a replica with instance id {@code instance} on a free port. */
    public FrontApp replica(String instance) throws Exception {
        FrontApp app = FrontApp.start(FrontFixture.config(nats, instance, overrides));
        replicas.add(app);
        return app;
    }

    /**
     * Opens a vsn 2.0.0 client of {@code app} with the anon key ({@link FrontFixture#wsUrl});
     * {@link #closeClients} or {@link #close} closes it.
     */
    public WsTestClient connect(FrontApp app) {
        WsTestClient c = new WsTestClient(http, FrontFixture.wsUrl(app.port()));
        clients.add(c);
        return c;
    }

    /** Closes every client {@link #connect} opened so far. */
    public void closeClients() {
        clients.forEach(WsTestClient::close);
        clients.clear();
    }

    /**
     * Closes the clients, every replica, then the server, even when one of them fails; rethrows
     * the first failure.
     */
    @Override
    public void close() {
        closeClients();
        List<AutoCloseable> all = new ArrayList<>(replicas);
        all.add(nats);
        Exception first = null;
        for (AutoCloseable c : all) {
            try {
                c.close();
            } catch (Exception e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first instanceof RuntimeException r) {
            throw r;
        }
        if (first != null) {
            throw new IllegalStateException(first);
        }
    }
}
