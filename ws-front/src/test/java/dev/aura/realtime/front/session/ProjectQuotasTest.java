package dev.aura.realtime.front.session;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.common.wire.ProjectLimits;
import dev.aura.realtime.common.wire.UsageReport;
import dev.aura.realtime.front.testing.Fakes;
import dev.aura.realtime.testkit.MutableClock;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Per-project limits: counted per project, per wall-clock second, with the other replicas' counts. */
class ProjectQuotasTest {
    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final Fakes.Board others = new Fakes.Board();
    private final Fakes.LimitsTable table = new Fakes.LimitsTable();
    /** 2 connections, 3 messages/s, 3 joins/s, 100 channels, 1,000 bytes/s, 500-byte payloads, 2 presence/s. */
    private final ProjectQuotas quotas =
            new ProjectQuotas(new ProjectQuota(2, 3, 3, 100, 1000, 500, 2), table, others, clock);

    @Test
    void connectionsArePerProjectCountTheOtherReplicasAndAreFreedOnRelease() {
        ProjectQuotas.Permit a1 = quotas.admitConnection("a");
        ProjectQuotas.Permit a2 = quotas.admitConnection("a");
        assertThat(a1).isNotNull();
        assertThat(a2).isNotNull();
        assertThat(quotas.admitConnection("a")).isNull();
        assertThat(quotas.admitConnection("b"))
                .as("another project is not affected")
                .isNotNull();
        a1.release();
        a1.release(); // idempotent
        assertThat(quotas.localUsers("a")).isEqualTo(1);
        others.counts.put("a", new UsageReport.Counts(1, 0, 0, 0, 0));
        assertThat(quotas.admitConnection("a"))
                .as("one here and one on another replica")
                .isNull();
        others.counts.clear();
        assertThat(quotas.admitConnection("a")).isNotNull();
    }

    @Test
    void ratesArePerWallClockSecondAndSubtractWhatTheOtherReplicasAdmitted() {
        for (int i = 0; i < 3; i++) {
            assertThat(quotas.tryJoin("a")).isTrue();
        }
        assertThat(quotas.tryJoin("a")).isFalse();
        assertThat(quotas.tryJoin("b")).isTrue();
        clock.advance(Duration.ofSeconds(1));
        others.counts.put("a", new UsageReport.Counts(0, 2, 0, 0, 0));
        assertThat(quotas.tryJoin("a")).isTrue();
        assertThat(quotas.tryJoin("a")).as("3 per second minus the others' 2").isFalse();
    }

    @Test
    void messagesStopAtTheCountOrTheBytesPerSecond() {
        assertThat(quotas.tryMessage("a", 10)).isTrue();
        assertThat(quotas.tryMessage("a", 10)).isTrue();
        assertThat(quotas.tryMessage("a", 10)).isTrue();
        assertThat(quotas.tryMessage("a", 10)).isFalse();
        clock.advance(Duration.ofSeconds(1));
        assertThat(quotas.tryMessage("a", 990)).isTrue();
        assertThat(quotas.tryMessage("a", 10)).isTrue();
        assertThat(quotas.tryMessage("a", 1))
                .as("1,000 bytes spent this second")
                .isFalse();
        assertThat(quotas.tryPresence("a")).isTrue();
        assertThat(quotas.tryPresence("a")).isTrue();
        assertThat(quotas.tryPresence("a")).isFalse();
    }

    @Test
    void aProjectsRowOverridesTheDefaults() {
        table.rows.put("a", new ProjectLimits(1, null, null, 7, null, 2, null));
        ProjectQuota q = quotas.quota("a");
        assertThat(q.maxConcurrentUsers()).isEqualTo(1);
        assertThat(q.maxChannelsPerClient()).isEqualTo(7);
        assertThat(q.maxPayloadBytes()).isEqualTo(2048);
        assertThat(q.maxEventsPerSecond()).isEqualTo(3);
        assertThat(quotas.admitConnection("a")).isNotNull();
        assertThat(quotas.admitConnection("a")).isNull();
        assertThat(quotas.quota("b").maxConcurrentUsers()).isEqualTo(2);
    }

    @Test
    void usageReportsConnectionsNowAndTheLastWholeSecondAndForgetsIdleProjects() {
        quotas.admitConnection("a");
        quotas.tryJoin("a");
        quotas.tryMessage("a", 40);
        quotas.tryMessage("b", 5);
        assertThat(quotas.usage().get("a")).isEqualTo(new UsageReport.Counts(1, 0, 0, 0, 0));
        clock.advance(Duration.ofSeconds(1));
        assertThat(quotas.usage().get("a")).isEqualTo(new UsageReport.Counts(1, 1, 1, 40, 0));
        clock.advance(Duration.ofSeconds(1));
        assertThat(quotas.usage().get("a")).isEqualTo(new UsageReport.Counts(1, 0, 0, 0, 0));
        clock.advance(Duration.ofSeconds(30));
        assertThat(quotas.usage()).containsOnlyKeys("a");
    }
}
