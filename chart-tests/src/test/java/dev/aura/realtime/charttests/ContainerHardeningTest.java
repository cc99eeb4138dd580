package dev.aura.realtime.charttests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSpec;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Every container the chart renders (ours and Postgres) is probed, bounded and unprivileged. */
class ContainerHardeningTest {

    @ParameterizedTest
    @EnumSource(Scenario.class)
    void everyContainerHasLivenessAndReadinessProbes(Scenario scenario) {
        forEachContainer(scenario, (pod, c) -> {
            assertThat(c.getLivenessProbe()).as("%s liveness", c.getName()).isNotNull();
            assertThat(c.getReadinessProbe()).as("%s readiness", c.getName()).isNotNull();
        });
    }

    @ParameterizedTest
    @EnumSource(Scenario.class)
    void everyContainerHasCpuAndMemoryLimits(Scenario scenario) {
        forEachContainer(scenario, (pod, c) -> {
            assertThat(c.getResources().getLimits())
                    .as("%s limits", c.getName())
                    .containsKeys("cpu", "memory");
            assertThat(c.getResources().getRequests())
                    .as("%s requests", c.getName())
                    .containsKeys("cpu", "memory");
        });
    }

    @ParameterizedTest
    @EnumSource(Scenario.class)
    void everyContainerRunsNonRootOnAReadOnlyRootWithoutCapabilities(Scenario scenario) {
        forEachContainer(scenario, (pod, c) -> {
            var sc = c.getSecurityContext();
            assertThat(sc).as("%s securityContext", c.getName()).isNotNull();
            assertThat(sc.getRunAsNonRoot()).as("%s runAsNonRoot", c.getName()).isTrue();
            assertThat(sc.getReadOnlyRootFilesystem())
                    .as("%s readOnlyRootFilesystem", c.getName())
                    .isTrue();
            assertThat(sc.getAllowPrivilegeEscalation())
                    .as("%s allowPrivilegeEscalation", c.getName())
                    .isFalse();
            assertThat(sc.getCapabilities().getDrop())
                    .as("%s capabilities.drop", c.getName())
                    .containsExactly("ALL");
            assertThat(sc.getCapabilities().getAdd())
                    .as("%s capabilities.add", c.getName())
                    .isNullOrEmpty();
            assertThat(sc.getPrivileged()).as("%s privileged", c.getName()).isNotEqualTo(Boolean.TRUE);

            var podSc = pod.getSecurityContext();
            assertThat(podSc.getRunAsNonRoot()).isTrue();
            Long uid = sc.getRunAsUser() != null ? sc.getRunAsUser() : podSc.getRunAsUser();
            assertThat(uid)
                    .as("%s numeric non-zero uid (runAsNonRoot needs one)", c.getName())
                    .isNotNull()
                    .isPositive();
            assertThat(podSc.getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
        });
    }

    @ParameterizedTest
    @EnumSource(Scenario.class)
    void aReadOnlyRootStillHasAWritableTmp(Scenario scenario) {
        forEachContainer(
                scenario,
                (pod, c) -> assertThat(c.getVolumeMounts())
                        .as("%s mounts", c.getName())
                        .anySatisfy(m -> assertThat(m.getMountPath()).isEqualTo("/tmp")));
    }

    private static void forEachContainer(Scenario scenario, java.util.function.BiConsumer<PodSpec, Container> check) {
        var specs = ChartFixture.render(scenario).podSpecs();
        assertThat(specs).isNotEmpty();
        for (PodSpec spec : specs) {
            for (Container c : RenderedManifests.allContainers(spec)) {
                check.accept(spec, c);
            }
        }
    }
}
