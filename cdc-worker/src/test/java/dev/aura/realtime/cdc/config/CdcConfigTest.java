package dev.aura.realtime.cdc.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.aura.realtime.common.config.ConfigException;
import dev.aura.realtime.common.config.Env;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The worker's configuration as read from the environment. */
class CdcConfigTest {
    private static final String REPLICATION = "jdbc:postgresql://db:5432/app?user=repl";
    private static final String SECRET = "0123456789abcdef0123456789abcdef";

    @Test
    void onlyTheReplicationUrlAndTheSecretAreRequired_everythingElseHasItsDocumentedDefault() {
        CdcConfig config = config(Map.of());
        assertThat(config.replicationUrl()).isEqualTo(REPLICATION);
        assertThat(config.postgresUrl())
                .as("POSTGRES_URL defaults to the replication URL")
                .isEqualTo(REPLICATION);
        assertThat(config.nats().servers()).containsExactly("nats://127.0.0.1:4222");
        assertThat(config.nats().auth()).isEqualTo(new dev.aura.realtime.common.config.NatsSettings.NoAuth());
        assertThat(config.registryBucketMaxBytes()).isEqualTo(64L * 1024 * 1024);
        assertThat(config.httpPort()).isEqualTo(8081);
        assertThat(config.slotName()).isEqualTo("aura_cdc_slot");
        assertThat(config.batchSize()).isEqualTo(1000);
        assertThat(config.fetchSize()).isEqualTo(500);
        assertThat(config.idleBackoff()).isEqualTo(Duration.ofMillis(100));
        assertThat(config.tableRefresh()).isEqualTo(Duration.ofSeconds(3));
        assertThat(config.numShards()).isEqualTo(4);
        assertThat(config.maxRecordBytes()).isEqualTo(1_048_576);
        assertThat(config.redecodeWarnBytes()).isEqualTo(268_435_456L);
        assertThat(config.messages()).isEqualTo(new CdcConfig.Messages(Duration.ofHours(72), Duration.ofMinutes(10)));
        assertThat(config.timings()).isEqualTo(CdcConfig.Timings.DEFAULT);
    }

    @Test
    void theMessagesRetentionAndJanitorPeriodAreReadWithinTheirBounds() {
        CdcConfig config = config(Map.of("CDC_MESSAGES_RETENTION_HOURS", "24", "CDC_MESSAGES_JANITOR_MS", "60000"));
        assertThat(config.messages()).isEqualTo(new CdcConfig.Messages(Duration.ofHours(24), Duration.ofMinutes(1)));
        assertThatThrownBy(() -> config(Map.of("CDC_MESSAGES_RETENTION_HOURS", "0")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("CDC_MESSAGES_RETENTION_HOURS");
        assertThatThrownBy(() -> config(Map.of("CDC_MESSAGES_JANITOR_MS", "10")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("CDC_MESSAGES_JANITOR_MS");
    }

    @Test
    void aMissingRequiredVariableIsNamed() {
        assertThatThrownBy(() -> CdcConfig.fromEnv(new Env(Map.of("AURA_JWT_SECRET", SECRET))))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("POSTGRES_REPLICATION_URL");
        assertThatThrownBy(() -> CdcConfig.fromEnv(new Env(Map.of("POSTGRES_REPLICATION_URL", REPLICATION))))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("AURA_JWT_SECRET");
    }

    @Test
    void aSlotNamePostgresWouldRefuseIsRefusedAtStartUp() {
        for (String bad : new String[] {"Aura", "aura-slot", "a".repeat(64)}) {
            assertThatThrownBy(() -> config(Map.of("CDC_SLOT_NAME", bad)))
                    .as(bad)
                    .isInstanceOf(ConfigException.class)
                    .hasMessageContaining("CDC_SLOT_NAME");
        }
        assertThat(config(Map.of("CDC_SLOT_NAME", "aura_2")).slotName()).isEqualTo("aura_2");
    }

    @Test
    void outOfRangeNumbersAreRefusedNamingTheVariable() {
        assertThatThrownBy(() -> config(Map.of("CDC_NUM_SHARDS", "0")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("CDC_NUM_SHARDS");
        assertThatThrownBy(() -> config(Map.of("CDC_MAX_RECORD_BYTES", "100")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("CDC_MAX_RECORD_BYTES");
        assertThatThrownBy(() -> config(Map.of("CDC_IDLE_BACKOFF_MS", "fast")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("CDC_IDLE_BACKOFF_MS");
    }

    @Test
    void theInstanceIdIsInstanceIdElsePodNameElseHostWithASuffix_andHoldsTheLease() {
        CdcConfig both = config(Map.of("INSTANCE_ID", "i-1", "POD_NAME", "cdc-0"));
        assertThat(both.instanceId()).isEqualTo("i-1");
        assertThat(both.leader().identity()).isEqualTo("i-1");

        CdcConfig pod = config(Map.of("POD_NAME", "cdc-0"));
        assertThat(pod.instanceId()).isEqualTo("cdc-0");
        assertThat(pod.leader().identity()).isEqualTo("cdc-0");

        CdcConfig a = config(Map.of());
        CdcConfig b = config(Map.of());
        assertThat(a.instanceId()).as("two processes on one host differ").isNotEqualTo(b.instanceId());
        assertThat(a.leader().identity()).isEqualTo(a.instanceId());
    }

    @Test
    void cdcIsStaleAfterTenSecondsPlusTwoIdleBackoffs_andThePoolHasFourConnectionsBeyondTheShards() {
        CdcConfig config = config(Map.of("CDC_IDLE_BACKOFF_MS", "500", "CDC_NUM_SHARDS", "8"));
        assertThat(config.staleAfter()).isEqualTo(Duration.ofSeconds(11));
        assertThat(config.poolSize()).isEqualTo(12);
    }

    @Test
    void theNaiveRlsModeIsGone_aStaleVariableChangesNothing() {
        assertThat(config(Map.of("CDC_RLS_MODE", "naive", "INSTANCE_ID", "i")))
                .isEqualTo(config(Map.of("INSTANCE_ID", "i")));
    }

    private static CdcConfig config(Map<String, String> vars) {
        Map<String, String> env = new HashMap<>(vars);
        env.put("POSTGRES_REPLICATION_URL", REPLICATION);
        env.put("AURA_JWT_SECRET", SECRET);
        return CdcConfig.fromEnv(new Env(env));
    }

    @Test
    void withoutATenantUrlTheWorkerProvisionsALoginNamedAfterTheSlotWithAPasswordEveryReplicaDerives() {
        TenantSqlConfig tenant = config(Map.of("POSTGRES_URL", "jdbc:postgresql://db/app?user=platform"))
                .tenantSql();
        assertThat(tenant.provisioned()).isTrue();
        assertThat(tenant.url()).isEqualTo("jdbc:postgresql://db/app?user=platform");
        assertThat(tenant.provisionedLogin()).isEqualTo("aura_cdc_slot_tenant");
        assertThat(tenant.provisionedPassword())
                .as("the same secret gives every replica the same password")
                .isEqualTo(config(Map.of()).tenantSql().provisionedPassword())
                .isNotEqualTo(TenantSqlConfig.passwordFor("another-secret-another-secret-123", "aura_cdc_slot_tenant"))
                .hasSizeGreaterThanOrEqualTo(43);
        assertThat(tenant.toString()).doesNotContain(tenant.provisionedPassword());
        assertThat(tenant.statementTimeout()).isEqualTo(Duration.ofMillis(250));
        assertThat(tenant.lockTimeout()).isEqualTo(Duration.ofMillis(100));
        // a long slot name still gives a login Postgres keeps whole (63 bytes)
        assertThat(TenantSqlConfig.loginFor("s".repeat(63))).hasSize(63).endsWith("_tenant");
    }

    @Test
    void aTenantUrlNamesTheLoginAndNothingIsProvisioned() {
        String url = "jdbc:postgresql://db/app?user=tenant&password=pw";
        TenantSqlConfig tenant = config(Map.of(
                        "POSTGRES_TENANT_URL",
                        url,
                        "CDC_TENANT_STATEMENT_TIMEOUT_MS",
                        "400",
                        "CDC_TENANT_LOCK_TIMEOUT_MS",
                        "50"))
                .tenantSql();
        assertThat(tenant.provisioned()).isFalse();
        assertThat(tenant.url()).isEqualTo(url);
        assertThat(tenant.statementTimeout()).isEqualTo(Duration.ofMillis(400));
        assertThat(tenant.lockTimeout()).isEqualTo(Duration.ofMillis(50));
        assertThat(tenant.toString()).doesNotContain("pw");
        assertThatThrownBy(() -> config(Map.of("CDC_TENANT_STATEMENT_TIMEOUT_MS", "0")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("CDC_TENANT_STATEMENT_TIMEOUT_MS");
    }
}
