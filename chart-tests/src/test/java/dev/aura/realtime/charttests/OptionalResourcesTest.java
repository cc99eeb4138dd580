package dev.aura.realtime.charttests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What each toggle adds or removes. ServiceMonitor is a CRD: it stays a generic resource. */
class OptionalResourcesTest {

    @Test
    void serviceMonitorsOnlyWhenToggled() {
        assertThat(ChartFixture.render(Scenario.DEFAULTS).ofKind("monitoring.coreos.com/v1", "ServiceMonitor"))
                .isEmpty();
        assertThat(ChartFixture.render(Scenario.EXTERNAL).ofKind("monitoring.coreos.com/v1", "ServiceMonitor"))
                .isEmpty();

        var monitors = ChartFixture.render(Scenario.ALL_ON).ofKind("monitoring.coreos.com/v1", "ServiceMonitor");
        assertThat(monitors).hasSize(2);
        assertThat(monitors).allSatisfy(m -> {
            @SuppressWarnings("unchecked")
            var spec = (Map<String, Object>) m.getAdditionalProperties().get("spec");
            @SuppressWarnings("unchecked")
            var endpoint = ((List<Map<String, Object>>) spec.get("endpoints")).get(0);
            assertThat(endpoint).containsEntry("path", "/metrics").containsEntry("port", "http");
            assertThat(m.getMetadata().getLabels()).containsEntry("release", "kube-prometheus-stack");
        });
    }

    @Test
    void autoscalingReplacesTheFixedReplicaCount() {
        assertThat(ChartFixture.render(Scenario.DEFAULTS).ofType(HorizontalPodAutoscaler.class))
                .isEmpty();
        assertThat(ChartFixture.render(Scenario.DEFAULTS)
                        .deployments("ws-front")
                        .get(0)
                        .getSpec()
                        .getReplicas())
                .isEqualTo(2);

        var rendered = ChartFixture.render(Scenario.ALL_ON);
        var wsFront = rendered.deployments("ws-front").get(0);
        assertThat(wsFront.getSpec().getReplicas()).isNull();
        assertThat(rendered.ofType(HorizontalPodAutoscaler.class))
                .singleElement()
                .satisfies(hpa -> {
                    assertThat(hpa.getSpec().getScaleTargetRef().getName())
                            .isEqualTo(wsFront.getMetadata().getName());
                    assertThat(hpa.getSpec().getMinReplicas()).isEqualTo(3);
                    assertThat(hpa.getSpec().getMetrics()).hasSize(2);
                });
    }

    @Test
    void disruptionBudgetsKeepOneWsFrontAndOneCdcStandby() {
        var pdbs = ChartFixture.render(Scenario.ALL_ON).ofType(PodDisruptionBudget.class);
        assertThat(pdbs).hasSize(4); // ws-front + one per CDC source
        assertThat(pdbs)
                .allSatisfy(p ->
                        assertThat(p.getSpec().getSelector().getMatchLabels()).isNotEmpty());
    }

    @Test
    void postgresStatefulSetUsesTheWal2jsonImageUnlessTheDatabaseIsExternal() {
        assertThat(ChartFixture.render(Scenario.EXTERNAL).ofType(StatefulSet.class))
                .isEmpty();
        assertThat(ChartFixture.render(Scenario.DEFAULTS).ofType(StatefulSet.class))
                .singleElement()
                .satisfies(sts -> {
                    var c = sts.getSpec()
                            .getTemplate()
                            .getSpec()
                            .getContainers()
                            .get(0);
                    assertThat(c.getImage()).contains("postgres-wal2json");
                    assertThat(EnvVarContractTest.env(c))
                            .containsKeys("MAX_SLOT_WAL_KEEP_SIZE", "MAX_REPLICATION_SLOTS", "MAX_WAL_SENDERS");
                    assertThat(sts.getSpec().getVolumeClaimTemplates()).hasSize(1);
                });
    }

    @Test
    void natsUrlPointsAtTheSubchartOrTheExternalServer() {
        var defaults = ChartFixture.render(Scenario.DEFAULTS);
        assertThat(CdcSourcesTest.envValue(defaults.deployments("cdc-worker").get(0), "NATS_URL"))
                .isEqualTo("nats://aura-nats:4222");
        assertThat(CdcSourcesTest.envValue(defaults.deployments("ws-front").get(0), "NATS_URL"))
                .isEqualTo("nats://aura-nats:4222");

        var external = ChartFixture.render(Scenario.EXTERNAL);
        assertThat(CdcSourcesTest.envValue(external.deployments("ws-front").get(0), "NATS_URL"))
                .isEqualTo("tls://nats.messaging.svc:4222");
    }

    @Test
    void anExistingSecretReplacesTheChartsSecret() {
        var external = ChartFixture.render(Scenario.EXTERNAL);
        assertThat(external.ofType(Secret.class)).isEmpty();
        var jwt = EnvVarContractTest.env(RenderedManifests.mainContainer(
                        external.deployments("ws-front").get(0)))
                .get("AURA_JWT_SECRET")
                .getValueFrom()
                .getSecretKeyRef();
        assertThat(jwt.getName()).isEqualTo("aura-realtime-secrets");
    }

    @Test
    void dashboardConfigMapOnlyWhenToggled() {
        assertThat(ChartFixture.render(Scenario.DEFAULTS).ofType(ConfigMap.class))
                .noneMatch(cm -> cm.getData().containsKey("aura-realtime.json"));
        assertThat(ChartFixture.render(Scenario.ALL_ON).ofType(ConfigMap.class))
                .filteredOn(cm -> !cm.getData().containsKey("permissions.conf")) // the NATS users' (NatsSecurityTest)
                .singleElement()
                .satisfies(cm -> assertThat(cm.getData()).containsKey("aura-realtime.json"));
    }
}
