package dev.aura.realtime.cdc.startup;

import dev.aura.realtime.cdc.catalog.PlatformDb;
import dev.aura.realtime.cdc.catalog.ProjectKeysTable;
import dev.aura.realtime.cdc.config.CdcConfig;
import dev.aura.realtime.cdc.control.ProjectKeysApi;
import dev.aura.realtime.cdc.http.HttpApi;
import dev.aura.realtime.cdc.keys.JwksFetcher;
import dev.aura.realtime.cdc.keys.ProjectKeysService;
import dev.aura.realtime.common.auth.JwtVerifier;
import io.nats.client.Connection;
import java.time.Clock;
import java.util.Deque;

/**
 * Starts what serves each project's own keys (docs/security.md "Each project's own keys") for
 * {@link WorkerParts}: their control API under {@code /v1/projects/} and the answers to ws-front's
 * questions about them; the started service is pushed on {@code started} for the worker's close.
 */
final class ProjectKeyServices {
    /** Questions answered from the database at once; a JWKS fetch holds none of them. */
    private static final int MAX_CONCURRENT = 8;

    private ProjectKeyServices() {}

    static void start(
            CdcConfig config,
            Connection nats,
            PlatformDb platform,
            HttpApi http,
            Clock clock,
            Deque<AutoCloseable> started) {
        ProjectKeysTable table = new ProjectKeysTable(platform);
        http.mount("/v1/projects/", new ProjectKeysApi(table, new JwtVerifier(config.jwt(), clock)));
        CdcConfig.ProjectJwks jwks = config.projectJwks();
        JwksFetcher fetcher = new JwksFetcher(
                new JwksFetcher.Settings(
                        jwks.timeout(),
                        jwks.maxBytes(),
                        config.jwt().jwksCacheTtl(),
                        config.jwt().jwksMinRefresh(),
                        jwks.privateAddresses()),
                clock::millis);
        ProjectKeysService service = new ProjectKeysService(nats, table, fetcher, MAX_CONCURRENT);
        service.start();
        started.push(service);
    }
}
