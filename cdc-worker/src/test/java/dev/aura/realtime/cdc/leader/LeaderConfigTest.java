package dev.aura.realtime.cdc.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.aura.realtime.common.config.ConfigException;
import dev.aura.realtime.common.config.Env;
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
        LeaderConfig config = LeaderConfig.fromEnv(new Env(Map.of("POD_NAME", "cdc-0")), NO_FILE);
        assertThat(config.mode()).isEqualTo(ElectionMode.AUTO);
        assertThat(config.leaseName()).isEqualTo("aura-cdc-worker");
        assertThat(config.leaseNamespace()).isEqualTo("default");
        assertThat(config.identity()).isEqualTo("cdc-0");
        assertThat(config.leaseDuration()).isEqualTo(Duration.ofSeconds(15));
        assertThat(config.retryPeriod()).isEqualTo(Duration.ofSeconds(5));
        assertThat(config.renewDeadline()).isEqualTo(Duration.ofSeconds(12));
        assertThat(config.usesKubernetes()).isFalse();
    }

    @Test
    void everyAllowedLeaseDuration_passesFabric8Validation() {
        for (int seconds = 2; seconds <= 120; seconds++) {
            LeaderConfig.withDerivedTimings(
                    ElectionMode.KUBERNETES, "l", "ns", "id", true, Duration.ofSeconds(seconds));
        }
    }

    @Test
    void namespace_fallsBackFromLeaseNamespaceToPodNamespaceToServiceAccountFile(@TempDir Path dir) throws IOException {
        Path file = Files.writeString(dir.resolve("namespace"), "from-file\n");
        assertThat(LeaderConfig.fromEnv(new Env(Map.of("LEASE_NAMESPACE", "lease", "POD_NAMESPACE", "pod")), file)
                        .leaseNamespace())
                .isEqualTo("lease");
        assertThat(LeaderConfig.fromEnv(new Env(Map.of("POD_NAMESPACE", "pod")), file)
                        .leaseNamespace())
                .isEqualTo("pod");
        assertThat(LeaderConfig.fromEnv(new Env(Map.of()), file).leaseNamespace())
                .isEqualTo("from-file");
    }

    @Test
    void identity_isPodNameElseInstanceIdElseHostName() {
        assertThat(LeaderConfig.fromEnv(new Env(Map.of("POD_NAME", "p", "INSTANCE_ID", "i")), NO_FILE)
                        .identity())
                .isEqualTo("p");
        assertThat(LeaderConfig.fromEnv(new Env(Map.of("INSTANCE_ID", "i")), NO_FILE)
                        .identity())
                .isEqualTo("i");
        assertThat(LeaderConfig.fromEnv(new Env(Map.of()), NO_FILE).identity()).isNotBlank();
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
        assertThatThrownBy(() -> config(Map.of("LEASE_DURATION_SECONDS", "1")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("LEASE_DURATION_SECONDS");
        assertThatThrownBy(() -> config(Map.of("LEASE_DURATION_SECONDS", "15s")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("LEASE_DURATION_SECONDS");
    }

    private static LeaderConfig config(Map<String, String> vars) {
        return LeaderConfig.fromEnv(new Env(vars), NO_FILE);
    }
}
