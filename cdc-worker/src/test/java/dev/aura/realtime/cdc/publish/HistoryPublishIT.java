package dev.aura.realtime.cdc.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.aura.realtime.cdc.failure.CdcFailure;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.testkit.NatsServer;
import io.nats.client.Connection;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The JetStream side of {@link EventPublisher} (postgres_changes history, docs/design.md R) against
 * a real nats-server: a flush that failed on an ack must not fail every flush after it (the batch is
 * re-published and its acks are awaited afresh), and a backlog is published with a bounded number of
 * acks outstanding (jnats cancels an ack that has not arrived within its request timeout: 50,000 at
 * once left most of them cancelled on a busy server, and every retry failed the same way).
 */
class HistoryPublishIT {
    private Connection nats;
    private JetStreamManagement jsm;
    private final String project = UUID.randomUUID().toString();
    private final String subject = Subjects.changes(project, "todos");
    private final String stream = "HISTORY_PUBLISH_IT_" + project.replace("-", "");
    private final byte[] body = "{\"type\":\"INSERT\",\"record\":{\"id\":1}}".getBytes(StandardCharsets.UTF_8);

    @BeforeEach
    void setUp() throws Exception {
        nats = NatsServer.shared().connect();
        jsm = nats.jetStreamManagement();
    }

    @AfterEach
    void tearDown() throws Exception {
        try {
            jsm.deleteStream(stream);
        } catch (Exception absent) {
            // the test that never created it
        }
        nats.close();
    }

    private void createStream() throws Exception {
        jsm.addStream(StreamConfiguration.builder()
                .name(stream)
                .subjects(Subjects.CHANGES + "." + Subjects.encodeToken(project) + ".>")
                .storageType(StorageType.Memory)
                .build());
    }

    @Test
    void aFlushThatFailedOnAnAckDoesNotFailTheNextOnes() throws Exception {
        try (EventPublisher p = new EventPublisher(nats, "test", s -> true)) {
            for (int i = 0; i < 100; i++) {
                p.publish(subject, "0/1:" + i, 1, body); // no stream yet: no ack can come
            }
            assertThatThrownBy(() -> p.flush(Duration.ofSeconds(5))).isInstanceOf(CdcFailure.class);

            createStream();
            for (int i = 0; i < 100; i++) {
                p.publish(subject, "0/1:" + i, 1, body); // the batch, re-published
            }
            p.flush(Duration.ofSeconds(5));
            assertThat(jsm.getStreamInfo(stream).getStreamState().getMsgCount()).isEqualTo(100);
            assertThat(p.unackedHistory()).isZero();
        }
    }

    @Test
    void aBacklogIsPublishedWithBoundedAcksOutstanding() throws Exception {
        createStream();
        int n = 50_000;
        int most = 0;
        try (EventPublisher p = new EventPublisher(nats, "test", s -> true)) {
            for (int i = 0; i < n; i++) {
                p.publish(subject, "0/2:" + i, 1, body);
                most = Math.max(most, p.unackedHistory());
            }
            p.flush(Duration.ofSeconds(30));
            assertThat(p.unackedHistory()).isZero();
        }
        assertThat(jsm.getStreamInfo(stream).getStreamState().getMsgCount()).isEqualTo(n);
        assertThat(most).isLessThanOrEqualTo(EventPublisher.MAX_HISTORY_IN_FLIGHT);
    }
}
