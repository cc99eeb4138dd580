package dev.aura.realtime.cdc.startup;

import dev.aura.realtime.cdc.catalog.PlatformDb;
import dev.aura.realtime.cdc.catalog.ProjectCatalog;
import dev.aura.realtime.cdc.catalog.ProjectLimitsTable;
import dev.aura.realtime.cdc.catalog.TableSecurity;
import dev.aura.realtime.cdc.config.CdcConfig;
import dev.aura.realtime.cdc.join.ChannelAccessService;
import dev.aura.realtime.cdc.join.ProjectLimitsService;
import dev.aura.realtime.cdc.join.SubscriptionCheckService;
import dev.aura.realtime.cdc.metrics.CdcMetrics;
import dev.aura.realtime.cdc.provision.RealtimeSchemas;
import dev.aura.realtime.cdc.tenant.TenantDb;
import dev.aura.realtime.cdc.tenant.TenantSqlStatus;
import dev.aura.realtime.cdc.upkeep.RealtimeUpkeep;
import io.nats.client.Connection;
import java.util.Deque;
import java.util.function.BooleanSupplier;

/**
 * Starts what answers ws-front's requests (join-time checks, project limits, private channels) and
 * the realtime upkeep (provisioning each project's schemas and identity, the janitor), for
 * {@link WorkerParts}; each started part is pushed on {@code started} for the worker's close.
 */
final class TenantServices {
    private TenantServices() {}

    /**
     * @param leading whether this replica holds the lease now (the janitor runs only then)
     * @return the projects' realtime schemas and identities
     */
    static RealtimeSchemas start(
            CdcConfig config,
            CdcConfig.Timings timings,
            Connection nats,
            PlatformDb platform,
            TenantDb tenant,
            TableSecurity security,
            BooleanSupplier leading,
            CdcMetrics metrics,
            Deque<AutoCloseable> started)
            throws Exception {
        // each project's identity (docs/design.md I): its runners are granted to the tenant login
        RealtimeSchemas realtimeSchemas =
                new RealtimeSchemas(platform, config.messages().retention(), config.jwtSecret(), () -> {
                    TenantSqlStatus s = tenant.status();
                    return s.usable() ? s.login() : config.tenantSql().provisionedLogin();
                });
        tenant.onProjectLoginRefused(realtimeSchemas::repairLogin);
        SubscriptionCheckService checks = new SubscriptionCheckService(
                nats,
                new ProjectCatalog(platform),
                security,
                tenant,
                timings.extraPoolConnections(),
                realtimeSchemas::ready,
                metrics);
        checks.start();
        started.push(checks);
        // two at a time: a primary-key look-up each, asked once per project per ws-front refresh period
        ProjectLimitsService limits = new ProjectLimitsService(
                nats, new ProjectLimitsTable(platform, config.history().defaultResumeSeconds()), 2);
        limits.start();
        started.push(limits);
        ChannelAccessService channels = new ChannelAccessService(
                nats, new ProjectCatalog(platform), realtimeSchemas, tenant, timings.tenantJoinConnections());
        channels.start();
        started.push(channels);
        RealtimeUpkeep upkeep = new RealtimeUpkeep(realtimeSchemas, tenant, leading);
        upkeep.start(config.tableRefresh(), config.messages().janitorPeriod());
        started.push(upkeep);
        return realtimeSchemas;
    }
}
