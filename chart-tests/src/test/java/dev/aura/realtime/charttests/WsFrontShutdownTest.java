package dev.aura.realtime.charttests;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.front.config.FrontSettings;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Graceful drain: the kubelet waits preStop, then sends SIGTERM, then the server drains for
 * WS_SHUTDOWN_GRACE_SECONDS; the pod's grace period must cover both or clients get cut hard.
 */
class WsFrontShutdownTest {
    private static final String GRACE = "WS_SHUTDOWN_GRACE_SECONDS";

    @ParameterizedTest
    @EnumSource(Scenario.class)
    void terminationGraceCoversPreStopAndTheServersDrain(Scenario scenario) {
        Deployment d = ChartFixture.render(scenario).deployments("ws-front").get(0);
        var pod = d.getSpec().getTemplate().getSpec();
        var container = pod.getContainers().get(0);
        long drain = Long.parseLong(EnvVarContractTest.env(container).get(GRACE).getValue());
        var preStop = container.getLifecycle().getPreStop().getExec().getCommand();
        assertThat(preStop).hasSize(2).first().isEqualTo("sleep");
        long sleep = Long.parseLong(preStop.get(1));

        assertThat(sleep).isPositive();
        assertThat(pod.getTerminationGracePeriodSeconds()).isGreaterThan(sleep + drain);
    }

    @Test
    void chartDefaultDrainIsTheServersDefault() {
        var container = RenderedManifests.mainContainer(
                ChartFixture.render(Scenario.DEFAULTS).deployments("ws-front").get(0));
        String chartDefault = EnvVarContractTest.env(container).get(GRACE).getValue();
        String serverDefault =
                FrontSettings.WS_SHUTDOWN_GRACE_SECONDS.defaultText().orElseThrow();
        assertThat(chartDefault).isEqualTo(serverDefault);
    }
}
