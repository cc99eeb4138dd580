package dev.aura.realtime.cdc.leader;

import dev.aura.realtime.cdc.config.LeaderConfig;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;

/**
 * Kubernetes clients for leader election: fail fast instead of fabric8's defaults (10 s timeouts
 * and 10 retries with backoff), because the elector itself retries every retry period and a
 * renewal that hangs past it would only delay noticing the loss.
 */
public final class LeaseClients {
    private LeaseClients() {}

    /** A client configured the usual fabric8 way (in-cluster service account, else kubeconfig), tuned by {@link #tune}. */
    public static KubernetesClient forElection(LeaderConfig config) {
        return new KubernetesClientBuilder()
                .withConfig(tune(Config.autoConfigure(null), config))
                .build();
    }

    /**
     * Returns a copy of {@code base} whose connect and request timeouts equal the retry period and
     * that does not retry failed requests.
     */
    public static Config tune(Config base, LeaderConfig config) {
        int timeoutMs = Math.toIntExact(config.retryPeriod().toMillis());
        return new ConfigBuilder(base)
                .withConnectionTimeout(timeoutMs)
                .withRequestTimeout(timeoutMs)
                .withRequestRetryBackoffLimit(0)
                .build();
    }
}
