package dev.aura.realtime.cdc.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.aura.realtime.cdc.config.LeaderConfig;
import dev.aura.realtime.common.config.Env;
import dev.aura.realtime.common.config.InstanceId;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** {@code disabled}, and {@code auto} outside a pod, lead without a Lease; {@code kubernetes} never falls back. */
class AlwaysLeaderTest {
    private final PublishLog log = new PublishLog();

    @Test
    void autoOutsideKubernetes_isAlwaysLeader() {
        runsAsAlwaysLeader(Map.of("LEADER_ELECTION", "auto", "POD_NAME", "solo", "LEASE_DURATION_SECONDS", "3"));
    }

    @Test
    void disabled_isAlwaysLeaderEvenInsideAPod() {
        runsAsAlwaysLeader(Map.of(
                "LEADER_ELECTION",
                "disabled",
                "KUBERNETES_SERVICE_HOST",
                "10.96.0.1",
                "POD_NAME",
                "solo",
                "LEASE_DURATION_SECONDS",
                "3"));
    }

    @Test
    void kubernetesMode_usesALeaseEvenOutsideAPod() {
        LeaderConfig config =
                config(Map.of("LEADER_ELECTION", "kubernetes", "POD_NAME", "k", "LEASE_DURATION_SECONDS", "3"));
        try (LeaderElection election = LeaderElection.fromConfig(config, log.workFor("k"), new SimpleMeterRegistry())) {
            assertThat(election).isInstanceOf(LeaseLeaderElection.class);
            assertThat(election.status().leader()).isFalse();
            assertThat(election.status().reason()).isEqualTo("not started");
        }
    }

    @Test
    void failingWork_isRestartedAfterTheBackoffWhileLeading() {
        AtomicInteger runs = new AtomicInteger();
        LeaderConfig config =
                config(Map.of("LEADER_ELECTION", "disabled", "POD_NAME", "solo", "LEASE_DURATION_SECONDS", "2"));
        try (AlwaysLeader election = new AlwaysLeader(
                config,
                gate -> {
                    runs.incrementAndGet();
                    throw new IllegalStateException("boom");
                },
                new SimpleMeterRegistry())) {
            election.start();
            await().atMost(Duration.ofSeconds(3)).until(() -> runs.get() >= 2); // backoff = retry period, 666 ms
            assertThat(election.status().leader()).isTrue();
        }
    }

    private void runsAsAlwaysLeader(Map<String, String> vars) {
        LeaderConfig config = config(vars);
        LeaderElection election = LeaderElection.fromConfig(config, log.workFor("solo"), new SimpleMeterRegistry());
        assertThat(election).isInstanceOf(AlwaysLeader.class);
        election.start();
        await().atMost(Duration.ofSeconds(2)).until(() -> log.count("solo") > 0);
        assertThat(election.status())
                .isEqualTo(new LeadershipStatus(true, "solo", 0, LeadershipStatus.MODE_ALWAYS_LEADER, null));
        assertThat(log.first("solo").orElseThrow().epoch()).isZero();
        election.close();
        election.close();
        long published = log.count("solo");
        assertThat(election.status().reason()).isEqualTo("closed");
        await().during(Duration.ofMillis(100))
                .atMost(Duration.ofSeconds(1))
                .until(() -> log.count("solo") == published);
    }

    private static LeaderConfig config(Map<String, String> vars) {
        Env env = new Env(vars);
        return LeaderConfig.fromEnv(env, InstanceId.fromEnv(env, "test"), Path.of("/nonexistent"));
    }
}
