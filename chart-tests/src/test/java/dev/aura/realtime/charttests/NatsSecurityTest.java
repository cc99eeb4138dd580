package dev.aura.realtime.charttests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * NATS is authenticated by default (docs/deployment.md, "NATS security"): the bundled server's
 * users, passwords and permissions, as the NATS subchart's values and our own objects must agree
 * on them, and the external path with creds files and TLS. The NATS subchart is a stand-in here
 * ({@link ChartFixture}), so its half is checked in values.yaml, with the names it templates
 * from the release name.
 */
class NatsSecurityTest {
    private static final String AUTH_NAME = ChartFixture.RELEASE + "-aura-nats";
    private static final Map<String, String> USERS =
            Map.of("cdc-worker", "aura-cdc-worker", "ws-front", "aura-ws-front");

    @Test
    void eachBinaryLogsInToTheBundledNatsAsItsOwnUserWithAGeneratedPassword() {
        RenderedManifests m = ChartFixture.render(Scenario.DEFAULTS);
        Secret secret = named(m.ofType(Secret.class), AUTH_NAME);
        for (var user : USERS.entrySet()) {
            String component = user.getKey();
            Deployment d = m.deployments(component).get(0);
            Map<String, EnvVar> env = EnvVarContractTest.env(RenderedManifests.mainContainer(d));
            assertThat(env.get("NATS_USER").getValue()).isEqualTo(user.getValue());
            var ref = env.get("NATS_PASSWORD").getValueFrom().getSecretKeyRef();
            assertThat(ref.getName()).isEqualTo(AUTH_NAME);
            assertThat(ref.getKey()).isEqualTo(component + "-password");
            assertThat(secret.getStringData().get(ref.getKey())).hasSizeGreaterThanOrEqualTo(32);
            assertThat(env.get("NATS_URL").getValue()).startsWith("nats://");
        }
        assertThat(secret.getStringData().get("cdc-worker-password"))
                .isNotEqualTo(secret.getStringData().get("ws-front-password"));
    }

    @Test
    void theBundledNatsGetsThoseUsersWithThePermissionsFile() throws IOException {
        RenderedManifests m = ChartFixture.render(Scenario.DEFAULTS);
        ConfigMap permissions = named(m.ofType(ConfigMap.class), AUTH_NAME);
        String file = Files.readString(ChartFixture.CHART_DIR.resolve("files/nats-permissions.conf"));
        assertThat(permissions.getData().get("permissions.conf").strip()).isEqualTo(file.strip());
        assertThat(file.lines().filter(l -> !l.strip().startsWith("#")))
                .as("no allow_responses (the server walks every recorded reply subject on each delivery)")
                .noneMatch(l -> l.contains("allow_responses"));

        JsonNode nats = new YAMLMapper()
                .readTree(ChartFixture.CHART_DIR.resolve("values.yaml").toFile())
                .get("nats");
        JsonNode merge = nats.path("config").path("merge");
        assertThat(merge.path("$include").asText())
                .as("the include, relative to /etc/nats-config/nats.conf, names the mounted ConfigMap key")
                .isEqualTo("../aura-nats/permissions.conf");
        JsonNode mount = nats.path("container").path("patch").get(0).path("value");
        assertThat(mount.path("mountPath").asText()).isEqualTo("/etc/aura-nats");
        JsonNode volume = nats.path("podTemplate").path("patch").get(0).path("value");
        assertThat(volume.path("name").asText()).isEqualTo(mount.path("name").asText());
        assertThat(releaseTemplated(volume.path("configMap").path("name"))).isEqualTo(AUTH_NAME);

        JsonNode users = merge.path("authorization").path("users");
        assertThat(users).hasSize(2);
        Map<String, String> permissionsOf =
                Map.of("aura-cdc-worker", "AURA_CDC_WORKER_PERMISSIONS", "aura-ws-front", "AURA_WS_FRONT_PERMISSIONS");
        for (JsonNode user : users) {
            String name = user.path("user").asText();
            assertThat(user.path("permissions").asText()).isEqualTo("<< $" + permissionsOf.get(name) + " >>");
            assertThat(file).contains(permissionsOf.get(name) + " = {");
            String passwordVariable = user.path("password").asText().replaceAll("^<< \\$(\\S+) >>$", "$1");
            JsonNode ref = nats.path("container")
                    .path("env")
                    .path(passwordVariable)
                    .path("valueFrom")
                    .path("secretKeyRef");
            assertThat(releaseTemplated(ref.path("name"))).isEqualTo(AUTH_NAME);
            String component = USERS.entrySet().stream()
                    .filter(e -> e.getValue().equals(name))
                    .findFirst()
                    .orElseThrow()
                    .getKey();
            assertThat(ref.path("key").asText()).isEqualTo(component + "-password");
        }
    }

    @Test
    void anExternalNatsWithCredsFilesAndClientCertificates() {
        RenderedManifests m = ChartFixture.render(Scenario.EXTERNAL);
        assertThat(m.ofType(Secret.class))
                .noneMatch(s -> s.getMetadata().getName().equals(AUTH_NAME));
        for (var component : List.of("cdc-worker", "ws-front")) {
            for (Deployment d : m.deployments(component)) {
                Container c = RenderedManifests.mainContainer(d);
                Map<String, EnvVar> env = EnvVarContractTest.env(c);
                assertThat(env).doesNotContainKeys("NATS_USER", "NATS_PASSWORD", "NATS_NKEY_SEED_FILE");
                assertThat(env.get("NATS_URL").getValue()).startsWith("tls://");
                assertThat(env.get("NATS_CREDS_FILE").getValue()).isEqualTo("/etc/aura/nats-auth/nats.creds");
                assertThat(env.get("NATS_TLS_CA_FILE").getValue()).isEqualTo("/etc/aura/nats-tls/ca.crt");
                assertThat(env.get("NATS_TLS_CERT_FILE").getValue()).isEqualTo("/etc/aura/nats-tls/tls.crt");
                assertThat(env.get("NATS_TLS_KEY_FILE").getValue()).isEqualTo("/etc/aura/nats-tls/tls.key");
                var volumes = d.getSpec().getTemplate().getSpec().getVolumes();
                String credsSecret = component.equals("cdc-worker") ? "aura-cdc-worker-nats" : "aura-ws-front-nats";
                assertThat(volumes)
                        .filteredOn(v -> v.getSecret() != null)
                        .extracting(v -> v.getSecret().getSecretName())
                        .containsExactlyInAnyOrder(credsSecret, "aura-nats-client-tls");
                assertThat(c.getVolumeMounts())
                        .extracting(io.fabric8.kubernetes.api.model.VolumeMount::getMountPath)
                        .contains("/etc/aura/nats-auth", "/etc/aura/nats-tls");
            }
        }
    }

    @Test
    void theChartRefusesNatsWithoutAuthenticationOrCredentials() {
        assertThatThrownBy(() -> ChartFixture.renderSet(Map.of("natsAuth.mode", "none")))
                .hasMessageContaining("supports password only");
        assertThatThrownBy(() -> ChartFixture.renderSet(Map.of(
                        "nats.enabled", "false", "externalNats.url", "nats://n:4222", "natsAuth.mode", "password")))
                .hasMessageContaining("natsAuth.cdcWorker.existingSecret is required");
        RenderedManifests open = ChartFixture.renderSet(
                Map.of("nats.enabled", "false", "externalNats.url", "nats://n:4222", "natsAuth.mode", "none"));
        assertThat(EnvVarContractTest.env(RenderedManifests.mainContainer(
                        open.deployments("ws-front").get(0))))
                .as("an explicit opt-out for a NATS without authorization")
                .doesNotContainKeys("NATS_USER", "NATS_PASSWORD", "NATS_CREDS_FILE", "NATS_NKEY_SEED_FILE");
    }

    @Test
    void bothBinariesGetTheBucketLimits() {
        RenderedManifests m = ChartFixture.render(Scenario.DEFAULTS);
        for (var component : List.of("cdc-worker", "ws-front")) {
            var env = EnvVarContractTest.env(
                    RenderedManifests.mainContainer(m.deployments(component).get(0)));
            assertThat(env.get("REGISTRY_BUCKET_MAX_BYTES").getValue()).isEqualTo("67108864");
        }
        var front = EnvVarContractTest.env(
                RenderedManifests.mainContainer(m.deployments("ws-front").get(0)));
        assertThat(front.get("PRESENCE_BUCKET_MAX_BYTES").getValue()).isEqualTo("67108864");
    }

    /** A {@code {$tplYaml: "{{ .Release.Name }}-x"}} value of the NATS subchart, as it renders. */
    private static String releaseTemplated(JsonNode node) {
        return node.path("$tplYaml").asText().replace("{{ .Release.Name }}", ChartFixture.RELEASE);
    }

    private static <T extends io.fabric8.kubernetes.api.model.HasMetadata> T named(List<T> all, String name) {
        return all.stream()
                .filter(r -> r.getMetadata().getName().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no " + name + " among " + all));
    }
}
