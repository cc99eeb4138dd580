package dev.aura.realtime.cdc.config;

import dev.aura.realtime.common.config.ConfigException;
import dev.aura.realtime.common.config.Env;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * Leader-election settings of the cdc-worker, read once from the environment.
 *
 * <h2>Timings</h2>
 * Only the lease duration {@code D} is configured ({@code LEASE_DURATION_SECONDS}, whole
 * seconds because the Lease stores seconds). The rest derives from it:
 * <ul>
 *   <li>retry period {@code R = D/3}: the leader renews every {@code R}, so renewals happen at a
 *       third of the lease duration and two attempts can fail before the fence trips; a standby
 *       retries acquiring every {@code R..2.2R} (fabric8 adds up to 120% jitter);</li>
 *   <li>renew deadline {@code 4D/5}: the fence trips when the last successful renewal is older
 *       than this. fabric8 requires {@code R + 1.2R < deadline < D}, i.e. above {@code 0.73D}, so
 *       {@code 2D/3} is not allowed; {@code 4D/5} keeps {@code D/5} (3 s by default) between our
 *       fence and the earliest moment another pod may take the lease, which covers clock skew
 *       between nodes (fabric8 compares the Lease's renew time with the taker's wall clock) and
 *       a publish already in flight.</li>
 * </ul>
 *
 * @param mode configured {@code LEADER_ELECTION}
 * @param leaseName {@code LEASE_NAME}
 * @param leaseNamespace {@code LEASE_NAMESPACE}, else {@code POD_NAMESPACE}, else the service
 *     account's namespace file, else {@code default}
 * @param identity lease holder identity: the worker's instance id ({@link CdcConfig#instanceId()})
 * @param insidePod whether {@code KUBERNETES_SERVICE_HOST} is set
 * @param leaseDuration {@code D}
 * @param renewDeadline {@code 4D/5}
 * @param retryPeriod {@code D/3}
 */
public record LeaderConfig(
        ElectionMode mode,
        String leaseName,
        String leaseNamespace,
        String identity,
        boolean insidePod,
        Duration leaseDuration,
        Duration renewDeadline,
        Duration retryPeriod) {

    /** Where Kubernetes mounts the pod's namespace. */
    public static final Path SERVICE_ACCOUNT_NAMESPACE_FILE =
            Path.of("/var/run/secrets/kubernetes.io/serviceaccount/namespace");

    static final String KUBERNETES_SERVICE_HOST = "KUBERNETES_SERVICE_HOST";
    /** fabric8's LeaderElector adds up to this factor of random jitter to the retry period. */
    private static final double FABRIC8_JITTER_FACTOR = 1.2;

    public LeaderConfig {
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(leaseName, "leaseName");
        Objects.requireNonNull(leaseNamespace, "leaseNamespace");
        Objects.requireNonNull(identity, "identity");
        long maxRetryMs = retryPeriod.toMillis() + (long) Math.ceil(retryPeriod.toMillis() * FABRIC8_JITTER_FACTOR);
        if (renewDeadline.toMillis() <= maxRetryMs || renewDeadline.compareTo(leaseDuration) >= 0) {
            throw new ConfigException("renew deadline " + renewDeadline.toMillis() + " ms must lie between "
                    + maxRetryMs + " ms (retry period with jitter) and the lease duration "
                    + leaseDuration.toMillis() + " ms");
        }
    }

    /**
     * Reads the process environment's values; see the record doc for defaults.
     *
     * @param identity the worker's instance id, which holds the Lease while this process leads
     */
    public static LeaderConfig fromEnv(Env env, String identity) {
        return fromEnv(env, identity, SERVICE_ACCOUNT_NAMESPACE_FILE);
    }

    /**
     * @param identity the worker's instance id, which holds the Lease while this process leads
     * @param namespaceFile the service account namespace file (a parameter so tests can point elsewhere)
     * @throws ConfigException naming the variable that is malformed
     */
    public static LeaderConfig fromEnv(Env env, String identity, Path namespaceFile) {
        ElectionMode mode = CdcSettings.LEADER_ELECTION.read(env);
        Duration lease = CdcSettings.LEASE_DURATION_SECONDS.read(env);
        return withDerivedTimings(
                mode,
                CdcSettings.LEASE_NAME.read(env),
                namespace(env, namespaceFile),
                identity,
                env.optional(KUBERNETES_SERVICE_HOST).isPresent(),
                lease);
    }

    /** Builds a config whose renew deadline and retry period derive from {@code leaseDuration} (whole seconds). */
    public static LeaderConfig withDerivedTimings(
            ElectionMode mode,
            String leaseName,
            String leaseNamespace,
            String identity,
            boolean insidePod,
            Duration leaseDuration) {
        long leaseMs = leaseDuration.toMillis();
        return new LeaderConfig(
                mode,
                leaseName,
                leaseNamespace,
                identity,
                insidePod,
                leaseDuration,
                Duration.ofMillis(leaseMs * 4 / 5),
                Duration.ofMillis(leaseMs / 3));
    }

    /** True when a Lease decides leadership; false means always-leader. */
    public boolean usesKubernetes() {
        return switch (mode) {
            case KUBERNETES -> true;
            case DISABLED -> false;
            case AUTO -> insidePod;
        };
    }

    private static String namespace(Env env, Path namespaceFile) {
        return CdcSettings.LEASE_NAMESPACE
                .find(env)
                .or(() -> CdcSettings.POD_NAMESPACE.find(env))
                .or(() -> readTrimmed(namespaceFile))
                .orElse("default");
    }

    private static Optional<String> readTrimmed(Path file) {
        try {
            String value = Files.readString(file, StandardCharsets.UTF_8).trim();
            return value.isEmpty() ? Optional.empty() : Optional.of(value);
        } catch (IOException e) {
            return Optional.empty(); // not in a pod, or no service account mounted
        }
    }
}
