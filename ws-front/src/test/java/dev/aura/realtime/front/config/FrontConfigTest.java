package dev.aura.realtime.front.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.aura.realtime.common.config.ConfigException;
import dev.aura.realtime.common.config.Env;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FrontConfigTest {
    private static final String SECRET = "config-test-secret-config-test-secret";

    private static FrontConfig load(String... pairs) {
        Map<String, String> env = new HashMap<>(Map.of("AURA_JWT_SECRET", SECRET));
        for (int i = 0; i < pairs.length; i += 2) {
            env.put(pairs[i], pairs[i + 1]);
        }
        return FrontConfig.load(new Env(env));
    }

    @Test
    void onlyTheSecretIsRequiredAndEverythingElseHasItsDocumentedDefault() {
        FrontConfig c = load("INSTANCE_ID", "front-1");
        assertThat(c.jwtSecret()).isEqualTo(SECRET);
        assertThat(c.instanceId()).isEqualTo("front-1");
        assertThat(c.wsPort()).isEqualTo(4000);
        assertThat(c.historySize()).isEqualTo(100);
        assertThat(c.maxFrameBytes()).isEqualTo(5_000_000);
        assertThat(c.idleTimeout()).isEqualTo(Duration.ofSeconds(60));
        assertThat(c.writeBufferLowBytes()).isEqualTo(262_144);
        assertThat(c.writeBufferHighBytes()).isEqualTo(1_048_576);
        assertThat(c.subscriptionTtl()).isEqualTo(Duration.ofSeconds(120));
        assertThat(c.cdcStatusTimeout()).isEqualTo(Duration.ofSeconds(15));
        assertThat(c.sseHeartbeat()).isEqualTo(Duration.ofSeconds(15));
        assertThat(c.presence().maxAge()).isEqualTo(Duration.ofSeconds(60));
        assertThat(c.presence().refreshInterval()).isEqualTo(Duration.ofSeconds(15));
    }

    @Test
    void theInstanceIdFallsBackToThePodNameThenToTheHostWithARandomSuffix() {
        assertThat(load("POD_NAME", "ws-front-7c9").instanceId()).isEqualTo("ws-front-7c9");
        assertThat(load("INSTANCE_ID", "a", "POD_NAME", "b").instanceId()).isEqualTo("a");
        String first = load().instanceId();
        assertThat(first).matches(".+-[0-9a-f]{8}");
        assertThat(load().instanceId()).as("two processes on one host differ").isNotEqualTo(first);
    }

    @Test
    void aMissingSecretIsRefusedByName() {
        assertThatThrownBy(() -> FrontConfig.load(new Env(Map.of())))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("AURA_JWT_SECRET");
    }

    @Test
    void malformedAndOutOfRangeValuesAreRefusedByName() {
        assertThatThrownBy(() -> load("WS_PORT", "http"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("WS_PORT");
        assertThatThrownBy(() -> load("WS_PORT", "70000"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("WS_PORT=70000");
        assertThatThrownBy(() -> load("HISTORY_TTL_SECONDS", "0"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("HISTORY_TTL_SECONDS");
    }

    @Test
    void aCdcStatusTimeoutNotAboveTheHeartbeatIsRefused() {
        assertThatThrownBy(() -> load("WS_CDC_STATUS_TIMEOUT_MS", "5000"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("WS_CDC_STATUS_TIMEOUT_MS=5000")
                .hasMessageContaining("heartbeat (5000 ms)");
        assertThat(load("WS_CDC_STATUS_TIMEOUT_MS", "5001").cdcStatusTimeout()).isEqualTo(Duration.ofMillis(5001));
    }

    @Test
    void invalidCombinationsAreRefusedNamingBothVariables() {
        assertThatThrownBy(() -> load("WS_WRITE_BUFFER_LOW_BYTES", "2000000"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("WS_WRITE_BUFFER_LOW_BYTES=2000000")
                .hasMessageContaining("WS_WRITE_BUFFER_HIGH_BYTES");
        assertThatThrownBy(() -> load("WS_MAX_OUTBOUND_BYTES", "4096"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("WS_MAX_OUTBOUND_BYTES=4096")
                .hasMessageContaining("WS_WRITE_BUFFER_HIGH_BYTES");
        assertThatThrownBy(() -> load("SUBSCRIPTION_REFRESH_MS", "30001"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("SUBSCRIPTION_REFRESH_MS");
        assertThatThrownBy(() -> load("PRESENCE_RECONCILE_MS", "60000"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("PRESENCE_RECONCILE_MS")
                .hasMessageContaining("PRESENCE_MAX_AGE_MS");
    }
}
