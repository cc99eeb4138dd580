package dev.aura.realtime.charttests;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Renders {@code deploy/k8s} with Helm as a Java library (helm-java: Helm's Go code through JNA,
 * no helm binary, no cluster).
 *
 * <p><b>The NATS dependency.</b> Chart.yaml declares the official NATS chart; Helm refuses to
 * lint or template a chart whose declared dependency is missing from {@code charts/}, and this
 * machine cannot reach the NATS chart repository. So every render works on a copy of the chart
 * in a temp directory whose {@code charts/nats} is a <em>stand-in</em> created here: a chart
 * named {@code nats} at a version inside the declared range, with no templates. The manifests
 * checked here are therefore exactly ours; the NATS objects are upstream's and are rendered for
 * real by .github/workflows/chart.yml after {@code helm dependency build}. The source chart
 * directory is never modified.
 */
final class ChartFixture {
    static final Path CHART_DIR = locateChart();
    static final String RELEASE = "aura";
    static final String NAMESPACE = "realtime";
    /** helm template defaults to v1.20, below the chart's kubeVersion; render for a current cluster. */
    static final String KUBE_VERSION = "1.31.0";
    /** Inside the range Chart.yaml declares for the nats dependency (^1.2.0). */
    static final String NATS_STAND_IN_VERSION = "1.2.0";

    private static final YAMLMapper YAML = new YAMLMapper();
    private static final Map<Scenario, RenderedManifests> RENDERED = new EnumMap<>(Scenario.class);

    private ChartFixture() {}

    /** Renders once per scenario per JVM; Helm calls go through one native library, so serialise. */
    static synchronized RenderedManifests render(Scenario scenario) {
        return RENDERED.computeIfAbsent(scenario, ChartFixture::renderFresh);
    }

    private static RenderedManifests renderFresh(Scenario scenario) {
        Path copy = copyWithNatsStandIn();
        var template = new Helm(copy)
                .template()
                .withName(RELEASE)
                .withNamespace(NAMESPACE)
                .withKubeVersion(KUBE_VERSION)
                // helm-java's template, unlike `helm template`, tries to reach a cluster for
                // `lookup`; the chart's only lookup (reuse of generated secrets) is switched off.
                .set("secrets.reuseGenerated", false);
        if (scenario.valuesFile != null) {
            template = template.withValuesFile(copy.resolve(scenario.valuesFile));
        }
        String yaml = template.call();
        keepForInspection(scenario, yaml);
        return RenderedManifests.parse(yaml);
    }

    /**
     * Renders the chart defaults plus {@code --set} values, uncached (for values the scenarios do
     * not cover, e.g. ones the chart must refuse).
     *
     * @throws IllegalStateException with Helm's message when the chart fails to render
     */
    static synchronized RenderedManifests renderSet(Map<String, String> values) {
        Path copy = copyWithNatsStandIn();
        var template = new Helm(copy)
                .template()
                .withName(RELEASE)
                .withNamespace(NAMESPACE)
                .withKubeVersion(KUBE_VERSION)
                .set("secrets.reuseGenerated", false);
        for (var e : values.entrySet()) {
            template = template.set(e.getKey(), e.getValue());
        }
        return RenderedManifests.parse(template.call());
    }

    /** Writes the manifests to target/rendered/ (a CI artifact, and what a reviewer reads). */
    private static void keepForInspection(Scenario scenario, String yaml) {
        try {
            Path dir = Files.createDirectories(Path.of("target", "rendered"));
            Files.writeString(dir.resolve(scenario.name().toLowerCase(java.util.Locale.ROOT) + ".yaml"), yaml);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * {@code helm lint --strict} on a copy whose values.yaml is the chart's merged with the
     * scenario's file (helm-java's lint has no --values option).
     */
    static synchronized LintResult lintStrict(Scenario scenario) {
        Path copy = copyWithNatsStandIn();
        if (scenario.valuesFile != null) {
            try {
                JsonNode base = YAML.readTree(copy.resolve("values.yaml").toFile());
                JsonNode overlay =
                        YAML.readTree(copy.resolve(scenario.valuesFile).toFile());
                YAML.writeValue(copy.resolve("values.yaml").toFile(), merge((ObjectNode) base, overlay));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return new Helm(copy).lint().strict().call();
    }

    /** Helm's value merge: maps merge key by key, anything else (lists too) replaces. */
    private static ObjectNode merge(ObjectNode base, JsonNode overlay) {
        for (Iterator<Map.Entry<String, JsonNode>> it = overlay.fields(); it.hasNext(); ) {
            var e = it.next();
            JsonNode current = base.get(e.getKey());
            if (current instanceof ObjectNode currentObject && e.getValue().isObject()) {
                merge(currentObject, e.getValue());
            } else {
                base.set(e.getKey(), e.getValue());
            }
        }
        return base;
    }

    private static Path copyWithNatsStandIn() {
        try {
            Path target = Files.createTempDirectory("aura-chart-").resolve("aura-realtime");
            copyTree(CHART_DIR, target);
            Path nats = target.resolve("charts/nats");
            Files.createDirectories(nats);
            Files.writeString(nats.resolve("Chart.yaml"), """
                    apiVersion: v2
                    name: nats
                    version: %s
                    description: Stand-in for the official NATS chart, created by chart-tests (renders nothing).
                    """.formatted(NATS_STAND_IN_VERSION));
            Files.writeString(nats.resolve("values.yaml"), "{}\n");
            return target;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> paths = Files.walk(from)) {
            for (Path p : (Iterable<Path>) paths::iterator) {
                Path rel = from.relativize(p);
                if (rel.startsWith("charts") || rel.toString().endsWith(".tgz")) {
                    continue; // a local `helm dependency build` result must not leak into the test
                }
                Path dest = to.resolve(rel.toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(dest);
                } else {
                    Files.copy(p, dest);
                }
            }
        }
    }

    private static Path locateChart() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path chart = dir.resolve("deploy/k8s/Chart.yaml");
            if (Files.isRegularFile(chart)) {
                return chart.getParent();
            }
        }
        throw new IllegalStateException(
                "deploy/k8s/Chart.yaml not found above " + Path.of("").toAbsolutePath());
    }
}
