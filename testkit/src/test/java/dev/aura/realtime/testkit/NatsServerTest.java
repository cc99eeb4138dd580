package dev.aura.realtime.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.aura.realtime.common.config.Env;
import dev.aura.realtime.common.config.NatsSettings;
import dev.aura.realtime.common.wire.KvBuckets;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import io.nats.client.Connection;
import io.nats.client.ErrorListener;
import io.nats.client.KeyValue;
import io.nats.client.Message;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.Subscription;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The test nats-server runs with authentication and the product's subject permissions
 * (deploy/k8s/files/nats-permissions.conf): what each user may and may not do, each way to
 * authenticate, TLS, and restarts.
 */
class NatsServerTest {
    private static NatsServer nats;

    @BeforeAll
    static void startServer() {
        nats = NatsServer.start();
    }

    @AfterAll
    static void stopServer() {
        nats.close();
    }

    @Test
    void aClientWithoutCredentialsIsRefused() {
        Options anonymous = new Options.Builder()
                .server(nats.url())
                .connectionTimeout(Duration.ofSeconds(5))
                .maxReconnects(0)
                .build();
        assertThatThrownBy(() -> Nats.connect(anonymous).close()).hasMessageContaining("Authorization Violation");
        Options wrongPassword = new Options.Builder()
                .server(nats.url())
                .userInfo("aura-ws-front", "not-the-password")
                .maxReconnects(0)
                .build();
        assertThatThrownBy(() -> Nats.connect(wrongPassword).close()).hasMessageContaining("Authorization Violation");
    }

    @Test
    void wsFrontMayNotPublishChangeEventsOrCdcStatus() throws Exception {
        List<String> errors = new CopyOnWriteArrayList<>();
        try (Connection observer = nats.connect();
                Connection front = Nats.connect(nats.options(NatsServer.User.WS_FRONT)
                        .errorListener(recording(errors))
                        .build())) {
            Subscription all = observer.subscribe("aura.realtime.>");
            observer.flush(Duration.ofSeconds(5));

            front.publish(Subjects.changes("p1", "t"), bytes("{\"forged\":true}"));
            front.publish(Subjects.CDC_STATUS, bytes("{\"active\":false}"));
            front.publish(Subjects.broadcast("p1", "room"), bytes("marker")); // allowed, sent after both

            Message first = all.nextMessage(Duration.ofSeconds(5));
            assertThat(first.getSubject())
                    .as("the server routes one connection's messages in order: the forged ones were dropped")
                    .isEqualTo(Subjects.broadcast("p1", "room"));
            Awaitility.await()
                    .atMost(Duration.ofSeconds(5))
                    .until(() -> errors.stream()
                                    .filter(e -> e.contains("Permissions Violation"))
                                    .count()
                            == 2);
        }
    }

    @Test
    void theCdcWorkerMayNotWriteTheRegistryAndWsFrontMayNotReadIt() throws Exception {
        try (Connection worker = nats.connect(NatsServer.User.CDC_WORKER);
                Connection front = nats.connect(NatsServer.User.WS_FRONT)) {
            KeyValue asFront = KvBuckets.ensure(front, KvBuckets.registry(1024 * 1024));
            asFront.put("p1.s1", bytes("{}"));

            KeyValue asWorker = KvBuckets.ensure(worker, KvBuckets.registry(1024 * 1024));
            assertThat(asWorker.keys()).as("the worker reads the registry").containsExactly("p1.s1");
            assertThatThrownBy(() -> asWorker.put("p1.forged", bytes("{}")))
                    .as("the worker cannot write registry entries");
            assertThatThrownBy(() -> asFront.keys()).as("ws-front cannot read registry entries (no consumer)");
        }
    }

    @Test
    void nkeySeedAndCredsFilesAuthenticate() throws Exception {
        for (Map<String, String> env :
                List.of(nats.nkeyEnv(NatsServer.User.CDC_WORKER), nats.credsEnv(NatsServer.User.CDC_WORKER))) {
            Options options = NatsSettings.fromEnv(new Env(env))
                    .builder(Subjects.CDC_WORKER_INBOX)
                    .maxReconnects(0)
                    .build();
            try (Connection worker = Nats.connect(options);
                    Connection observer = nats.connect()) {
                Subscription status = observer.subscribe(Subjects.CDC_STATUS);
                observer.flush(Duration.ofSeconds(5));
                worker.publish(Subjects.CDC_STATUS, bytes("{}"));
                assertThat(status.nextMessage(Duration.ofSeconds(5)))
                        .as(env.keySet().toString())
                        .isNotNull();
            }
        }
    }

    @Test
    void restartsOnTheSamePortWithTheSameCredentials() throws Exception {
        try (NatsServer own = NatsServer.start()) {
            int port = own.port();
            assertRoundTrip(own);

            own.stop();
            assertThat(own.isRunning()).isFalse();
            own.restart();
            assertThat(own.port()).isEqualTo(port);
            assertRoundTrip(own);

            own.kill();
            own.restart();
            assertRoundTrip(own);
        }
    }

    @Test
    void tlsServersVerifyClientCertificates() throws Exception {
        try (NatsServer tls = NatsServer.startTls(true)) {
            assertThat(tls.url()).startsWith("tls://");
            assertRoundTrip(tls);
            Map<String, String> withoutClientCert = tls.env(NatsServer.User.TEST);
            withoutClientCert.remove("NATS_TLS_CERT_FILE");
            withoutClientCert.remove("NATS_TLS_KEY_FILE");
            Options options = NatsSettings.fromEnv(new Env(withoutClientCert))
                    .builder("_INBOX")
                    .maxReconnects(0)
                    .connectionTimeout(Duration.ofSeconds(5))
                    .build();
            assertThatThrownBy(() -> Nats.connect(options).close()).as("no client certificate");
        }
    }

    private static void assertRoundTrip(NatsServer server) throws Exception {
        try (Connection connection = server.connect()) {
            var subscription = connection.subscribe("testkit.ping");
            connection.publish("testkit.ping", bytes("hi"));
            assertThat(subscription.nextMessage(Duration.ofSeconds(5)).getData())
                    .isEqualTo(bytes("hi"));
            assertThat(connection.getServerInfo().isJetStreamAvailable()).isTrue();
            assertThat(KvBuckets.ensure(connection, KvBuckets.registry(1024 * 1024))
                            .getBucketName())
                    .isEqualTo(SubscriptionEntry.BUCKET);
        }
    }

    private static ErrorListener recording(List<String> errors) {
        return new ErrorListener() {
            @Override
            public void errorOccurred(Connection conn, String error) {
                errors.add(error);
            }
        };
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
