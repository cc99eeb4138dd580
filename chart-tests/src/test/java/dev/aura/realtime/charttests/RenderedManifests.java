package dev.aura.realtime.charttests;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResource;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The documents of one {@code helm template} run, each parsed into fabric8's typed model.
 * Kinds the model does not know (CRDs such as ServiceMonitor) stay {@link GenericKubernetesResource};
 * every typed document must have no field the model does not know ({@link StrictModel}).
 */
final class RenderedManifests {
    private static final Pattern DOC_SEPARATOR = Pattern.compile("(?m)^---\\s*$");
    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    final String yaml;
    final List<HasMetadata> resources;

    private RenderedManifests(String yaml, List<HasMetadata> resources) {
        this.yaml = yaml;
        this.resources = List.copyOf(resources);
    }

    static RenderedManifests parse(String yaml) {
        List<HasMetadata> out = new ArrayList<>();
        for (String doc : DOC_SEPARATOR.split(yaml)) {
            String source = sourceOf(doc);
            if (doc.lines().allMatch(l -> l.isBlank() || l.stripLeading().startsWith("#"))) {
                continue;
            }
            KubernetesResource parsed = SERIALIZATION.unmarshal(doc, KubernetesResource.class);
            if (!(parsed instanceof HasMetadata resource)) {
                throw new AssertionError(source + ": not a Kubernetes object: " + parsed);
            }
            if (!(resource instanceof GenericKubernetesResource)) {
                StrictModel.assertNoUnknownFields(
                        resource,
                        source + " " + resource.getKind() + "/"
                                + resource.getMetadata().getName());
            }
            out.add(resource);
        }
        return new RenderedManifests(yaml, out);
    }

    private static String sourceOf(String doc) {
        return doc.lines()
                .filter(l -> l.startsWith("# Source: "))
                .findFirst()
                .map(l -> l.substring(10))
                .orElse("?");
    }

    <T extends HasMetadata> List<T> ofType(Class<T> type) {
        return resources.stream().filter(type::isInstance).map(type::cast).toList();
    }

    List<GenericKubernetesResource> ofKind(String apiVersion, String kind) {
        return ofType(GenericKubernetesResource.class).stream()
                .filter(r -> apiVersion.equals(r.getApiVersion()) && kind.equals(r.getKind()))
                .toList();
    }

    List<Deployment> deployments(String component) {
        return ofType(Deployment.class).stream()
                .filter(d -> component.equals(labels(d).get("app.kubernetes.io/component")))
                .toList();
    }

    /** Every pod template of the release (Deployments and StatefulSets). */
    List<PodSpec> podSpecs() {
        List<PodSpec> specs = new ArrayList<>();
        ofType(Deployment.class)
                .forEach(d -> specs.add(d.getSpec().getTemplate().getSpec()));
        ofType(StatefulSet.class)
                .forEach(s -> specs.add(s.getSpec().getTemplate().getSpec()));
        return specs;
    }

    /** The first container of {@code d}'s pod: the one running the binary. */
    static Container mainContainer(Deployment d) {
        return d.getSpec().getTemplate().getSpec().getContainers().get(0);
    }

    static List<Container> allContainers(PodSpec spec) {
        List<Container> all = new ArrayList<>(spec.getContainers());
        if (spec.getInitContainers() != null) {
            all.addAll(spec.getInitContainers());
        }
        return all;
    }

    static Map<String, String> labels(HasMetadata r) {
        return r.getMetadata().getLabels() == null ? Map.of() : r.getMetadata().getLabels();
    }
}
