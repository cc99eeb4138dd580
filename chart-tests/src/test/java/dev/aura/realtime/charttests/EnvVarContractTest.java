package dev.aura.realtime.charttests;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.aura.realtime.cdc.config.CdcSettings;
import dev.aura.realtime.common.config.Setting;
import dev.aura.realtime.front.config.FrontSettings;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVarSource;
import java.io.IOException;
import java.nio.file.Files;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The chart sets only variables the binaries declare, by the names in {@link CdcSettings#ALL} and
 * {@link FrontSettings#ALL} (the declarations config loading reads through and the docs are
 * generated from), sets every variable that has no default, and by default passes the binaries'
 * own defaults except where it decides otherwise ({@link #CHART_CHOICES}).
 */
class EnvVarContractTest {
    /** Variables whose chart default differs from the binary's on purpose, and why. */
    static final Map<String, String> CHART_CHOICES = Map.of(
            "NATS_URL", "the release's NATS service, not localhost",
            "NATS_USER", "each binary's own NATS user",
            "LEADER_ELECTION", "kubernetes: inside the chart a Lease always decides, never always-leader",
            "LEASE_NAME", "one Lease per release and CDC source",
            "AURA_HISTORY_STORAGE", "memory: the bundled NATS has no file store");

    @ParameterizedTest
    @EnumSource(Scenario.class)
    void cdcWorkerEnvNamesAreOnesTheBinaryReads(Scenario scenario) {
        var deployments = ChartFixture.render(scenario).deployments("cdc-worker");
        assertThat(deployments).isNotEmpty();
        for (var d : deployments) {
            Container c = RenderedManifests.mainContainer(d);
            assertThat(envNames(c))
                    .as("%s env", d.getMetadata().getName())
                    .doesNotHaveDuplicates()
                    .isSubsetOf(names(CdcSettings.ALL))
                    .containsAll(required(CdcSettings.ALL));
        }
    }

    @ParameterizedTest
    @EnumSource(Scenario.class)
    void wsFrontEnvNamesAreOnesTheBinaryReads(Scenario scenario) {
        var deployments = ChartFixture.render(scenario).deployments("ws-front");
        assertThat(deployments).hasSize(1);
        Set<String> allowed = new HashSet<>(names(FrontSettings.ALL));
        Container c = RenderedManifests.mainContainer(deployments.get(0));
        assertThat(envNames(c)).doesNotHaveDuplicates().isSubsetOf(allowed).containsAll(required(FrontSettings.ALL));
    }

    @Test
    void byDefaultTheChartPassesTheBinariesOwnDefaults_butWhereItChoosesOtherwise() {
        var rendered = ChartFixture.render(Scenario.DEFAULTS);
        checkDefaults(rendered.deployments("cdc-worker"), CdcSettings.ALL);
        checkDefaults(rendered.deployments("ws-front"), FrontSettings.ALL);
    }

    private static void checkDefaults(
            List<io.fabric8.kubernetes.api.model.apps.Deployment> deployments, List<Setting<?>> declared) {
        assertThat(deployments).isNotEmpty();
        Map<String, Setting<?>> byName = declared.stream().collect(Collectors.toMap(Setting::name, s -> s));
        for (var d : deployments) {
            for (var e : RenderedManifests.mainContainer(d).getEnv()) {
                Setting<?> setting = byName.get(e.getName());
                if (e.getValue() == null || setting == null || CHART_CHOICES.containsKey(e.getName())) {
                    continue;
                }
                assertThat(e.getValue())
                        .as(
                                "%s in %s: values.yaml's default must be the binary's (%s), or a listed chart choice",
                                e.getName(), d.getMetadata().getName(), setting.defaultDoc())
                        .isEqualTo(setting.defaultText().orElse(null));
            }
        }
    }

    /**
     * The templates' "managed" lists (names a user's extra env may not repeat) name declared
     * variables, and every variable the chart sets itself in any scenario.
     */
    @Test
    void theTemplatesManagedListsHoldEveryVariableTheChartSets() throws IOException {
        Map<String, List<Setting<?>>> declared = Map.of("cdc-worker", CdcSettings.ALL, "ws-front", FrontSettings.ALL);
        Map<String, String> valueKeys = Map.of("cdc-worker", "cdcWorker", "ws-front", "wsFront");
        for (String component : declared.keySet()) {
            Set<String> managed = managedList(component + ".yaml");
            assertThat(managed).as("%s managed list", component).isSubsetOf(names(declared.get(component)));
            for (Scenario scenario : Scenario.values()) {
                Set<String> extra = extraEnvNames(scenario, valueKeys.get(component));
                for (var d : ChartFixture.render(scenario).deployments(component)) {
                    Set<String> setByChart = new HashSet<>(envNames(RenderedManifests.mainContainer(d)));
                    setByChart.removeAll(extra);
                    assertThat(managed)
                            .as("%s managed list (%s)", component, scenario)
                            .containsAll(setByChart);
                }
            }
        }
    }

    private static Set<String> managedList(String template) throws IOException {
        String text =
                Files.readString(ChartFixture.CHART_DIR.resolve("templates").resolve(template));
        Matcher list = Pattern.compile("\"managed\" \\(list ([^)]*)\\)").matcher(text);
        assertThat(list.find())
                .as("checkExtraEnv's managed list in %s", template)
                .isTrue();
        Matcher name = Pattern.compile("\"([A-Z0-9_]+)\"").matcher(list.group(1));
        Set<String> names = new HashSet<>();
        while (name.find()) {
            names.add(name.group(1));
        }
        return names;
    }

    /** Names of the scenario's {@code <component>.env} entries: set by the user, not the chart. */
    private static Set<String> extraEnvNames(Scenario scenario, String valueKey) throws IOException {
        if (scenario.valuesFile == null) {
            return Set.of();
        }
        var values = new YAMLMapper()
                .readTree(ChartFixture.CHART_DIR.resolve(scenario.valuesFile).toFile());
        Set<String> names = new HashSet<>();
        values.path(valueKey).path("env").forEach(e -> names.add(e.path("name").asText()));
        return names;
    }

    @ParameterizedTest
    @EnumSource(Scenario.class)
    void identityComesFromTheDownwardApiAndElectionIsKubernetes(Scenario scenario) {
        for (var d : ChartFixture.render(scenario).deployments("cdc-worker")) {
            Map<String, io.fabric8.kubernetes.api.model.EnvVar> env = env(RenderedManifests.mainContainer(d));
            assertThat(env.get("POD_NAME").getValueFrom().getFieldRef().getFieldPath())
                    .isEqualTo("metadata.name");
            assertThat(env.get("POD_NAMESPACE").getValueFrom().getFieldRef().getFieldPath())
                    .isEqualTo("metadata.namespace");
            assertThat(env.get("LEADER_ELECTION").getValue()).isEqualTo("kubernetes");
        }
    }

    @ParameterizedTest
    @EnumSource(Scenario.class)
    void secretsComeFromSecretsNeverFromPlainValues(Scenario scenario) {
        for (var d : ChartFixture.render(scenario).deployments("cdc-worker")) {
            var env = env(RenderedManifests.mainContainer(d));
            for (String secret : List.of("AURA_JWT_SECRET", "POSTGRES_REPLICATION_URL", "POSTGRES_URL")) {
                EnvVarSource from = env.get(secret).getValueFrom();
                assertThat(env.get(secret).getValue()).as(secret).isNull();
                assertThat(from.getSecretKeyRef().getKey()).as(secret).isEqualTo(secret);
            }
            EnvVarSource tenant = env.get("POSTGRES_TENANT_URL").getValueFrom();
            assertThat(tenant.getSecretKeyRef().getKey()).isEqualTo("POSTGRES_TENANT_URL");
            assertThat(tenant.getSecretKeyRef().getOptional())
                    .as("unset: the worker provisions its tenant login")
                    .isTrue();
        }
    }

    /** Issue 24: both binaries read the JWT signing keys (JWKS JSON) from the Secret, never from a plain value. */
    @ParameterizedTest
    @EnumSource(Scenario.class)
    void signingKeysComeFromTheSecretInBothBinaries(Scenario scenario) {
        var rendered = ChartFixture.render(scenario);
        var deployments = new java.util.ArrayList<>(rendered.deployments("cdc-worker"));
        deployments.addAll(rendered.deployments("ws-front"));
        for (var d : deployments) {
            var env = env(RenderedManifests.mainContainer(d));
            var jwks = env.get("AURA_JWT_JWKS");
            assertThat(jwks).as(d.getMetadata().getName()).isNotNull();
            assertThat(jwks.getValue()).isNull();
            assertThat(jwks.getValueFrom().getSecretKeyRef().getKey()).isEqualTo("AURA_JWT_JWKS");
            assertThat(jwks.getValueFrom().getSecretKeyRef().getOptional()).isTrue();
            assertThat(jwks.getValueFrom().getSecretKeyRef().getName())
                    .isEqualTo(env.get("AURA_JWT_SECRET")
                            .getValueFrom()
                            .getSecretKeyRef()
                            .getName());
            assertThat(env.get("AURA_JWT_ACCEPT_HS256").getValue()).isEqualTo("true");
            if (scenario == Scenario.ALL_ON) {
                String secretName = jwks.getValueFrom().getSecretKeyRef().getName();
                var secret = rendered.ofType(io.fabric8.kubernetes.api.model.Secret.class).stream()
                        .filter(s -> s.getMetadata().getName().equals(secretName))
                        .findFirst()
                        .orElseThrow();
                assertThat(secret.getStringData()).containsKey("AURA_JWT_JWKS");
                assertThat(secret.getStringData().get("AURA_JWT_JWKS")).contains("\"kid\":\"ci-only\"");
                assertThat(env.get("AURA_JWT_JWKS_URL").getValue())
                        .isEqualTo("https://auth.example.com/.well-known/jwks.json");
                assertThat(env.get("AURA_JWT_JWKS_MIN_REFRESH_SECONDS").getValue())
                        .isEqualTo("20");
            } else {
                assertThat(env).doesNotContainKey("AURA_JWT_JWKS_URL");
            }
        }
    }

    static Map<String, io.fabric8.kubernetes.api.model.EnvVar> env(Container c) {
        return c.getEnv().stream().collect(Collectors.toMap(io.fabric8.kubernetes.api.model.EnvVar::getName, e -> e));
    }

    private static List<String> envNames(Container c) {
        return c.getEnv().stream()
                .map(io.fabric8.kubernetes.api.model.EnvVar::getName)
                .toList();
    }

    private static Set<String> names(List<Setting<?>> settings) {
        return settings.stream().map(Setting::name).collect(Collectors.toSet());
    }

    /** The binary refuses to start without them. */
    private static Set<String> required(List<Setting<?>> settings) {
        return settings.stream().filter(Setting::isRequired).map(Setting::name).collect(Collectors.toSet());
    }
}
