package dev.aura.realtime.front.quota;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.common.wire.ProjectLimits;
import dev.aura.realtime.common.wire.UsageReport;
import dev.aura.realtime.front.protocol.Reasons;
import dev.aura.realtime.front.relay.BucketLedger;
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

    @Test
    void aJoinCostsOneJoinAndItsChecksAgainstABudgetDerivedFromTheJoinsPerSecond() {
        // 3 joins/s: 30 checks/s unless a row or PROJECT_MAX_CHECKS_PER_SECOND says otherwise
        assertThat(quotas.quota("a").maxChecksPerSecond()).isEqualTo(30);
        assertThat(quotas.admitJoin("a", 20)).isNull();
        assertThat(quotas.admitJoin("a", 11))
                .as("20 + 11 checks > 30")
                .isEqualTo(Reasons.tooManyChecks(11, 30))
                .startsWith("SubscriptionCheckRateLimitReached: ");
        assertThat(quotas.admitJoin("a", 10))
                .as("a refused join counted nothing")
                .isNull();
        assertThat(quotas.admitJoin("a", 0)).as("a join without checks").isNull();
        assertThat(quotas.admitJoin("a", 0)).as("3 joins this second").isEqualTo(Reasons.PROJECT_TOO_MANY_JOINS);
        assertThat(quotas.admitJoin("b", 30)).as("another project's budget").isNull();
        clock.advance(Duration.ofSeconds(1));
        assertThat(quotas.usage().get("a").checks()).isEqualTo(30);
        assertThat(quotas.usage().get("a").joins()).isEqualTo(3);
        others.counts.put("a", new UsageReport.Counts(0, 0, 0, 0, 0, 25, 0, 0));
        assertThat(quotas.admitJoin("a", 6))
                .as("30 minus the other replicas' 25")
                .isNotNull();
        assertThat(quotas.admitJoin("a", 5)).isNull();
        assertThat(quotas.admitJoin("a", 31))
                .as("more than the whole budget is never admitted")
                .isNotNull();
    }

    @Test
    void theChecksBudgetFollowsARowsJoinsUnlessSetItself() {
        table.rows.put("a", new ProjectLimits(null, null, 7, null, null, null, null));
        assertThat(quotas.quota("a").maxChecksPerSecond()).isEqualTo(70);
        table.rows.put("a", new ProjectLimits(null, null, 7, null, null, null, null, 5, 1000L, 2000L));
        ProjectQuota q = quotas.quota("a");
        assertThat(q.maxChecksPerSecond()).isEqualTo(5);
        assertThat(q.maxRegistryBytes()).isEqualTo(1000);
        assertThat(q.maxPresenceBytes()).isEqualTo(2000);
        ProjectQuota explicit = new ProjectQuota(2, 3, 3, 100, 1000, 500, 2, 9, 10, 10);
        assertThat(explicit.with(new ProjectLimits(null, null, 7, null, null, null, null))
                        .maxChecksPerSecond())
                .as("a global PROJECT_MAX_CHECKS_PER_SECOND is not scaled by a row's joins")
                .isEqualTo(9);
    }

    @Test
    void bucketBytesAreReportedAndSharesSubtractTheOtherReplicas() {
        MutableClock ledgerClock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
        BucketLedger registry = new BucketLedger("aura_subscriptions", Duration.ofSeconds(120), ledgerClock);
        BucketLedger presence = new BucketLedger("aura_presence", Duration.ofSeconds(60), ledgerClock);
        table.rows.put("a", new ProjectLimits(null, null, null, null, null, null, null, null, 1000L, 500L));
        ProjectQuotas q = new ProjectQuotas(
                new ProjectQuota(2, 3, 3, 100, 1000, 500, 2), table, others, clock, registry, presence);
        assertThat(registry.charge("a", "a.s1", 300, q.registryShares().share("a")))
                .isTrue();
        assertThat(presence.charge("a", "k1", 200, q.presenceShares().share("a")))
                .isTrue();
        assertThat(q.usage().get("a"))
                .as("a project with bytes but no connection is reported")
                .isEqualTo(new UsageReport.Counts(0, 0, 0, 0, 0, 0, 300, 200));
        others.counts.put("a", new UsageReport.Counts(0, 0, 0, 0, 0, 0, 600, 250));
        BucketLedger.Shares shares = q.registryShares();
        assertThat(shares.share("a") - shares.elsewhere("a")).isEqualTo(400);
        assertThat(q.presenceShares().elsewhere("a")).isEqualTo(250);
    }
}
