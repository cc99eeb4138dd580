package dev.aura.realtime.charttests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** One cdc-worker per Postgres cluster: own Deployment, slot, Lease, database URLs and Service. */
class CdcSourcesTest {

    @Test
    void defaultsRunOneSourceOnTheSharedSlotWithTwoReplicas() {
        var cdc = ChartFixture.render(Scenario.DEFAULTS).deployments("cdc-worker");
        assertThat(cdc).singleElement().satisfies(d -> {
            assertThat(d.getSpec().getReplicas()).isEqualTo(2);
            assertThat(envValue(d, "CDC_SLOT_NAME")).isEqualTo("aura_cdc_slot");
            assertThat(envValue(d, "LEASE_NAME")).isEqualTo("aura-aura-realtime-cdc-shared");
        });
    }

    @Test
    void everySourceGetsItsOwnDeploymentSlotLeaseAndService() {
        var rendered = ChartFixture.render(Scenario.ALL_ON);
        var cdc = rendered.deployments("cdc-worker");

        assertThat(cdc).hasSize(3);
        assertThat(distinct(cdc, d -> d.getMetadata().getName())).hasSize(3);
        assertThat(distinct(cdc, d -> envValue(d, "CDC_SLOT_NAME")))
                .hasSize(3)
                .contains("aura_cdc_slot", "aura_cdc_tenant_a");
        assertThat(distinct(cdc, d -> envValue(d, "LEASE_NAME"))).hasSize(3);
        assertThat(distinct(cdc, d -> d.getSpec().getSelector().getMatchLabels().get("aura.dev/cdc-source")))
                .hasSize(3);
        assertThat(cdc).allSatisfy(d -> assertThat(d.getSpec().getReplicas()).isEqualTo(2));

        var services = rendered.ofType(Service.class).stream()
                .filter(s -> "cdc-worker".equals(RenderedManifests.labels(s).get("app.kubernetes.io/component")))
                .toList();
        assertThat(services).hasSize(3);
        for (Deployment d : cdc) {
            var podLabels = d.getSpec().getTemplate().getMetadata().getLabels();
            assertThat(services)
                    .filteredOn(s -> podLabels
                            .entrySet()
                            .containsAll(s.getSpec().getSelector().entrySet()))
                    .as("services selecting %s", d.getMetadata().getName())
                    .hasSize(1);
        }
    }

    @Test
    void eachSourceReadsItsOwnDatabaseSecret() {
        var rendered = ChartFixture.render(Scenario.ALL_ON);
        var secretOf = rendered.deployments("cdc-worker").stream()
                .collect(java.util.stream.Collectors.toMap(
                        d -> d.getSpec().getSelector().getMatchLabels().get("aura.dev/cdc-source"),
                        d -> secretRef(d, "POSTGRES_REPLICATION_URL")));

        assertThat(secretOf)
                .containsEntry("shared", "aura-aura-realtime")
                .containsEntry("tenant-a", "tenant-a-db")
                .containsEntry("tenant-b", "aura-aura-realtime-cdc-tenant-b-db");
        assertThat(rendered.ofType(Secret.class))
                .extracting(s -> s.getMetadata().getName())
                .containsExactlyInAnyOrder(
                        "aura-aura-realtime", "aura-aura-realtime-cdc-tenant-b-db", "aura-aura-nats" /* NATS users */);
        Secret tenantB = rendered.ofType(Secret.class).stream()
                .filter(s -> s.getMetadata().getName().equals("aura-aura-realtime-cdc-tenant-b-db"))
                .findFirst()
                .orElseThrow();
        assertThat(tenantB.getStringData())
                .as("a source's tenant login URL reaches its Secret (POSTGRES_TENANT_URL)")
                .containsEntry(
                        "POSTGRES_TENANT_URL", "jdbc:postgresql://tenant-b-rw:5432/app?user=aura_tenant&password=ci");
        assertThat(secretRef(
                        rendered.deployments("cdc-worker").stream()
                                .filter(d -> "tenant-b"
                                        .equals(d.getSpec()
                                                .getSelector()
                                                .getMatchLabels()
                                                .get("aura.dev/cdc-source")))
                                .findFirst()
                                .orElseThrow(),
                        "POSTGRES_TENANT_URL"))
                .isEqualTo("aura-aura-realtime-cdc-tenant-b-db");
    }

    @ParameterizedTest
    @EnumSource(Scenario.class)
    void probesAndPortsMatchTheConfiguredHttpPort(Scenario scenario) {
        for (Deployment d : ChartFixture.render(scenario).deployments("cdc-worker")) {
            var c = RenderedManifests.mainContainer(d);
            assertThat(c.getPorts())
                    .singleElement()
                    .satisfies(p ->
                            assertThat(p.getContainerPort()).isEqualTo(Integer.parseInt(envValue(d, "CDC_HTTP_PORT"))));
            assertThat(c.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/health");
            assertThat(c.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/ready");
            // Never two leaders' worth of pods during a rollout: surge 0.
            assertThat(d.getSpec()
                            .getStrategy()
                            .getRollingUpdate()
                            .getMaxSurge()
                            .getIntVal())
                    .isZero();
        }
    }

    static String envValue(Deployment d, String name) {
        return EnvVarContractTest.env(RenderedManifests.mainContainer(d))
                .get(name)
                .getValue();
    }

    private static String secretRef(Deployment d, String name) {
        return EnvVarContractTest.env(RenderedManifests.mainContainer(d))
                .get(name)
                .getValueFrom()
                .getSecretKeyRef()
                .getName();
    }

    private static <T> List<T> distinct(List<Deployment> ds, Function<Deployment, T> f) {
        return ds.stream().map(f).distinct().toList();
    }
}
