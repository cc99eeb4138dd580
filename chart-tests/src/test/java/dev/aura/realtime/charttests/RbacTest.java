package dev.aura.realtime.charttests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** C1: the cdc-worker may touch Leases in its own namespace for leader election, nothing else. */
class RbacTest {

    @ParameterizedTest
    @EnumSource(Scenario.class)
    void grantsOnlyLeaseVerbsInTheReleaseNamespace(Scenario scenario) {
        var rendered = ChartFixture.render(scenario);

        assertThat(rendered.ofType(ClusterRole.class)).isEmpty();
        assertThat(rendered.ofType(ClusterRoleBinding.class)).isEmpty();
        assertThat(rendered.ofType(Role.class)).singleElement().satisfies(role -> {
            assertThat(role.getMetadata().getNamespace()).isEqualTo(ChartFixture.NAMESPACE);
            assertThat(role.getRules()).singleElement().satisfies(rule -> {
                assertThat(rule.getApiGroups()).containsExactly("coordination.k8s.io");
                assertThat(rule.getResources()).containsExactly("leases");
                assertThat(rule.getVerbs()).containsExactlyInAnyOrder("get", "create", "update", "patch");
                assertThat(rule.getNonResourceURLs()).isNullOrEmpty();
            });
        });
    }

    @ParameterizedTest
    @EnumSource(Scenario.class)
    void bindsTheRoleToTheCdcWorkerServiceAccountOnly(Scenario scenario) {
        var rendered = ChartFixture.render(scenario);
        String role = rendered.ofType(Role.class).get(0).getMetadata().getName();
        var cdcAccounts = rendered.deployments("cdc-worker").stream()
                .map(d -> d.getSpec().getTemplate().getSpec().getServiceAccountName())
                .distinct()
                .toList();

        assertThat(rendered.ofType(RoleBinding.class)).singleElement().satisfies(binding -> {
            assertThat(binding.getRoleRef().getKind()).isEqualTo("Role");
            assertThat(binding.getRoleRef().getName()).isEqualTo(role);
            assertThat(binding.getSubjects()).singleElement().satisfies(s -> {
                assertThat(s.getKind()).isEqualTo("ServiceAccount");
                assertThat(s.getNamespace()).isEqualTo(ChartFixture.NAMESPACE);
                assertThat(cdcAccounts).containsExactly(s.getName());
            });
        });
    }

    @ParameterizedTest
    @EnumSource(Scenario.class)
    void givesNoApiTokenToPodsThatDoNotNeedOne(Scenario scenario) {
        var rendered = ChartFixture.render(scenario);
        assertThat(rendered.deployments("ws-front"))
                .allSatisfy(d -> assertThat(d.getSpec().getTemplate().getSpec().getAutomountServiceAccountToken())
                        .isFalse());
    }
}
