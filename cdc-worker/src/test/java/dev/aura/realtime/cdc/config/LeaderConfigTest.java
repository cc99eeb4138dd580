package dev.aura.realtime.cdc.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.aura.realtime.common.config.ConfigException;
import dev.aura.realtime.common.config.Env;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfig;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectorBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LeaderConfigTest {
    private static final Path NO_FILE = Path.of("/nonexistent/namespace");

    @Test
    void defaults_deriveRetryAtAThirdAndDeadlineAtFourFifths() {
        LeaderConfig config = config(Map.of());
        assertThat(config.mode()).isEqualTo(ElectionMode.AUTO);
        assertThat(config.leaseName()).isEqualTo("aura-cdc-worker");
        assertThat(config.leaseNamespace()).isEqualTo("default");
        assertThat(config.identity()).isEqualTo("cdc-0");
        assertThat(config.leaseDuration()).isEqualTo(Duration.ofSeconds(15));
        assertThat(config.retryPeriod()).isEqualTo(Duration.ofSeconds(5));
        assertThat(config.renewDeadline()).isEqualTo(Duration.ofSeconds(12));
        assertThat(config.usesKubernetes()).isFalse();
    }

    /** fabric8 itself judges the derived timings: its elector refuses a configuration it cannot run. */
    @Test
    void everyAcceptedLeaseDuration_givesTimingsFabric8sElectorAccepts() {
        io.fabric8.kubernetes.client.Config offline =
                new ConfigBuilder().withMasterUrl("https://127.0.0.1:1").build();
        try (KubernetesClient client =
                new KubernetesClientBuilder().withConfig(offline).build()) {
            for (int seconds = 2; seconds <= 3600; seconds++) {
                LeaderConfig config = config(Map.of("LEASE_DURATION_SECONDS", Integer.toString(seconds)));
                LeaderElectionConfig fabric8 = new LeaderElectionConfig(
                        new LeaseLock(config.leaseNamespace(), config.leaseName(), config.identity()),
                        config.leaseDuration(),
                        config.renewDeadline(),
                        config.retryPeriod(),
                        new LeaderCallbacks(() -> {}, () -> {}, holder -> {}),
                        true,
                        config.leaseName());
                assertThatCode(() -> new LeaderElectorBuilder(client, Runnable::run)
                                .withConfig(fabric8)
                                .build())
                        .as("LEASE_DURATION_SECONDS=%d", seconds)
                        .doesNotThrowAnyException();
            }
        }
    }

    @Test
    void leaseDurationsOutsideTwoSecondsToAnHourAreRefused() {
        assertThatThrownBy(() -> config(Map.of("LEASE_DURATION_SECONDS", "1")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("LEASE_DURATION_SECONDS");
        assertThatThrownBy(() -> config(Map.of("LEASE_DURATION_SECONDS", "3601")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("LEASE_DURATION_SECONDS");
    }

    @Test
    void namespace_fallsBackFromLeaseNamespaceToPodNamespaceToServiceAccountFile(@TempDir Path dir) throws IOException {
        Path file = Files.writeString(dir.resolve("namespace"), "from-file\n");
        assertThat(LeaderConfig.fromEnv(new Env(Map.of("LEASE_NAMESPACE", "lease", "POD_NAMESPACE", "pod")), "i", file)
                        .leaseNamespace())
                .isEqualTo("lease");
        assertThat(LeaderConfig.fromEnv(new Env(Map.of("POD_NAMESPACE", "pod")), "i", file)
                        .leaseNamespace())
                .isEqualTo("pod");
        assertThat(LeaderConfig.fromEnv(new Env(Map.of()), "i", file).leaseNamespace())
                .isEqualTo("from-file");
    }

    @Test
    void modeDecidesWhetherKubernetesIsUsed() {
        assertThat(config(Map.of("LEADER_ELECTION", "auto", "KUBERNETES_SERVICE_HOST", "10.0.0.1"))
                        .usesKubernetes())
                .isTrue();
        assertThat(config(Map.of("LEADER_ELECTION", "AUTO")).usesKubernetes()).isFalse();
        assertThat(config(Map.of("LEADER_ELECTION", "kubernetes")).usesKubernetes())
                .isTrue();
        assertThat(config(Map.of("LEADER_ELECTION", "disabled", "KUBERNETES_SERVICE_HOST", "10.0.0.1"))
                        .usesKubernetes())
                .isFalse();
    }

    @Test
    void invalidValues_failNamingTheVariable() {
        assertThatThrownBy(() -> config(Map.of("LEADER_ELECTION", "maybe")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("LEADER_ELECTION");
        assertThatThrownBy(() -> config(Map.of("LEASE_DURATION_SECONDS", "15s")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("LEASE_DURATION_SECONDS");
    }

    private static LeaderConfig config(Map<String, String> vars) {
        return LeaderConfig.fromEnv(new Env(vars), "cdc-0", NO_FILE);
    }
}
