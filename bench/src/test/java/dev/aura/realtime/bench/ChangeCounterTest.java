package dev.aura.realtime.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.aura.realtime.common.wire.AuraHeaders;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.testkit.NatsServer;
import io.nats.client.Connection;
import io.nats.client.Nats;
import io.nats.client.impl.Headers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The counter of a CDC turn counts its own reader's events only (issue 39, finding 1), against a
 * real nats-server: another reader's messages, copies and events of an earlier backlog are left
 * out, so a round cannot be credited with work it did not do.
 */
class ChangeCounterTest {
    private static void publish(Connection c, String subject, String origin, String id) {
        Headers h = new Headers();
        if (origin != null) {
            h.add(AuraHeaders.ORIGIN, origin);
        }
        if (id != null) {
            h.add(AuraHeaders.EVENT_ID, id);
        }
        c.publish(subject, h, "{}".getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void countsOnlyItsReadersDistinctEventsFromTheBacklogsStart() throws Exception {
        NatsServer nats = NatsServer.shared();
        String project = UUID.randomUUID().toString();
        String subject = Subjects.CHANGES + "." + Subjects.encodeToken(project) + ".bench_cdc";
        try (Connection sub = Nats.connect(nats.options(NatsServer.User.TEST).build());
                Connection pub = Nats.connect(nats.options(NatsServer.User.TEST).build());
                ChangeCounter counter = new ChangeCounter(sub, project)) {
            counter.reset("cdc-worker-stream", new dev.aura.realtime.common.lsn.Lsn(0x2_0000_0000L).value());
            for (int i = 0; i < 10; i++) {
                publish(pub, subject, "cdc-worker-stream", "2/" + Integer.toHexString(0x100 * i) + ":0");
            }
            publish(pub, subject, "cdc-worker-stream", "2/100:0"); // a copy (re-published)
            publish(pub, subject, "cdc-worker-poll", "2/A00:0"); // another reader
            publish(pub, subject, null, "2/B00:0"); // no origin (an unattributed publisher)
            publish(pub, subject, "cdc-worker-stream", "1/FFFFFF00:0"); // an earlier backlog
            pub.flush(Duration.ofSeconds(5));
            assertFalse(counter.await(11, 1000, 5000));
            assertEquals(10, counter.count());
            assertEquals(2, counter.foreign());
            assertEquals(1, counter.copies());
            assertEquals(1, counter.stale());
            assertTrue(counter.lastNanos() >= counter.firstNanos());
            // a new count starts from nothing, for the reader it names
            counter.reset("bench-debezium-peer");
            publish(
                    pub,
                    subject,
                    "bench-debezium-peer",
                    DebeziumPeer.eventId("{\"source\":{\"lsn\":33}}", "{\"id\":7}"));
            pub.flush(Duration.ofSeconds(5));
            assertTrue(counter.await(1, 1000, 5000));
        }
    }

    @Test
    void debeziumsEventIdIsItsChangesLsnAndKey() {
        assertEquals(
                "0/21:7",
                DebeziumPeer.eventId(
                        "{\"before\":null,\"source\":{\"txId\":5,\"lsn\":33,\"xmin\":null}}", "{\"id\":7}"));
        assertEquals(33, ChangeCounter.lsnOf("0/21:7"));
        assertEquals((2L << 32) | 0x100, ChangeCounter.lsnOf("2/100:0"));
        assertEquals(-1, ChangeCounter.lsnOf("no-lsn"));
    }
}
