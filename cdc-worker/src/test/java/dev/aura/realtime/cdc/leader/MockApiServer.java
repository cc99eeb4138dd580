package dev.aura.realtime.cdc.leader;

import dev.aura.realtime.cdc.config.LeaderConfig;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;

/**
 * fabric8's Kubernetes API mock in CRUD mode (plain HTTP): it stores the Lease and enforces
 * resourceVersion on updates, so electors really race. Hands out tuned clients and closes them.
 */
final class MockApiServer implements AutoCloseable {
    static final String NAMESPACE = "test";

    private final KubernetesMockServer server = new KubernetesMockServer(
            new Context(), new MockWebServer(), new HashMap<>(), new KubernetesCrudDispatcher(), false);
    private final List<KubernetesClient> clients = new ArrayList<>();

    MockApiServer() {
        server.init();
    }

    int port() {
        return server.getPort();
    }

    /** A client for the mock server, with the election's timeouts. */
    KubernetesClient client(LeaderConfig config) {
        return clientAt(port(), config);
    }

    /** A client for an API server at {@code localhost:port} (the mock, a proxy in front of it, or a dead port). */
    KubernetesClient clientAt(int port, LeaderConfig config) {
        Config base = new ConfigBuilder(Config.empty())
                .withMasterUrl("http://localhost:" + port + "/")
                .withNamespace(NAMESPACE)
                .withHttp2Disable(true)
                .withOauthToken("secret")
                .build();
        KubernetesClient client = new KubernetesClientBuilder()
                .withConfig(LeaseClients.tune(base, config))
                .build();
        synchronized (clients) {
            clients.add(client);
        }
        return client;
    }

    @Override
    public void close() {
        synchronized (clients) {
            clients.forEach(KubernetesClient::close);
        }
        server.destroy();
    }
}
