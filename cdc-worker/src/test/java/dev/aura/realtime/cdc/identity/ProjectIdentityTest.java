package dev.aura.realtime.cdc.identity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ProjectIdentityTest {
    private final ProjectIdentity id = new ProjectIdentity("0A2F64A8-51C3-4B6E-9D3A-0123456789AB");

    @Test
    void namesDeriveFromTheProjectIdAloneAndFitPostgresNames() {
        assertThat(id.base()).isEqualTo("project_0a2f64a8_51c3_4b6e_9d3a_0123456789ab");
        assertThat(id.role(ProjectIdentity.ANON)).isEqualTo(id.base() + "_anon");
        assertThat(id.role(ProjectIdentity.AUTHENTICATED)).isEqualTo(id.base() + "_authenticated");
        assertThat(id.runner(ProjectIdentity.ANON)).isEqualTo("aura_rls.\"" + id.base() + "_anon\"");
        for (String name : new String[] {id.role(ProjectIdentity.AUTHENTICATED), id.login()}) {
            assertThat(name.getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(63);
        }
    }

    @Test
    void onlyTheClientRolesHaveProjectRolesAndIdsMustBeUuids() {
        assertThatThrownBy(() -> id.role("postgres")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ProjectIdentity("x\"; drop role y; --"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void passwordsAreTheSameOnEveryReplicaAndDifferPerLoginAndSecret() {
        String a = ProjectIdentity.password("s".repeat(32), id.login());
        assertThat(ProjectIdentity.password("s".repeat(32), id.login())).isEqualTo(a);
        assertThat(ProjectIdentity.password("t".repeat(32), id.login())).isNotEqualTo(a);
        assertThat(ProjectIdentity.password("s".repeat(32), id.base() + "_other"))
                .isNotEqualTo(a);
    }
}
