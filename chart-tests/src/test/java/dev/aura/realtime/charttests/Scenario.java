package dev.aura.realtime.charttests;

/**
 * The value sets the chart is rendered with. Files live beside the chart in {@code deploy/k8s/ci/}
 * so that .github/workflows/chart.yml renders exactly the same ones with the real helm binary.
 */
enum Scenario {
    /** values.yaml only: in-cluster Postgres, NATS subchart, no ServiceMonitor, no HPA. */
    DEFAULTS(null),
    /** Every toggle on: Postgres, NATS subchart, ServiceMonitor, HPA, PDBs, ingress, dashboard, three CDC sources. */
    ALL_ON("ci/all-on-values.yaml"),
    /** External Postgres and NATS URL, existing Secret: no StatefulSet, no subchart. */
    EXTERNAL("ci/external-values.yaml");

    /** Values file relative to the chart directory, or null for the chart defaults. */
    final String valuesFile;

    Scenario(String valuesFile) {
        this.valuesFile = valuesFile;
    }
}
