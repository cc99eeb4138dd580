package dev.aura.realtime.cdc.upkeep;

import dev.aura.realtime.cdc.platform.ClientRoles;
import dev.aura.realtime.cdc.platform.ProjectCatalog;
import dev.aura.realtime.cdc.platform.RealtimeSchemas;
import dev.aura.realtime.cdc.tenant.ChannelChecks;
import dev.aura.realtime.cdc.tenant.TenantDb;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the projects' realtime schemas in place and their messages tables short (docs/design.md
 * H2): every {@code provisionPeriod} it provisions projects registered since ({@link
 * RealtimeSchemas#ensureAll}, platform SQL, no tenant code), and every {@code janitorPeriod} it
 * deletes messages older than {@link RealtimeSchemas#RETENTION} through each project's
 * {@code aura_janitor()} on the tenant pool (the table is the tenant's: its triggers must never run
 * in a platform session), batch by batch until a batch comes back short. Every replica runs it;
 * the deletes are idempotent, so replicas running at once only repeat each other's no-ops.
 * One platform thread; {@link #close()} is idempotent.
 */
public final class RealtimeUpkeep implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RealtimeUpkeep.class);
    /** Batches one project gets per janitor run, so a huge backlog cannot hold the thread for long. */
    private static final int MAX_BATCHES_PER_RUN = 20;

    private final RealtimeSchemas schemas;
    private final ProjectCatalog projects;
    private final TenantDb tenant;
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("aura-realtime-upkeep").daemon().factory());

    public RealtimeUpkeep(RealtimeSchemas schemas, ProjectCatalog projects, TenantDb tenant) {
        this.schemas = schemas;
        this.projects = projects;
        this.tenant = tenant;
    }

    public void start(Duration provisionPeriod, Duration janitorPeriod) {
        scheduler.scheduleWithFixedDelay(this::provision, 0, provisionPeriod.toMillis(), TimeUnit.MILLISECONDS);
        scheduler.scheduleWithFixedDelay(
                this::janitor, janitorPeriod.toMillis(), janitorPeriod.toMillis(), TimeUnit.MILLISECONDS);
    }

    void provision() {
        try {
            schemas.ensureAll();
        } catch (SQLException | RuntimeException e) {
            log.warn("[RealtimeSchemaFailed] could not list projects to provision: {}", e.getMessage());
        }
    }

    /** One janitor run over every provisioned project. */
    public void janitor() {
        if (tenant.status().off()) {
            return;
        }
        try {
            for (ProjectCatalog.RealtimeProject p : projects.realtimeProjects()) {
                String rt = RealtimeSchemas.nameOf(p.projectId());
                for (int batch = 0; batch < MAX_BATCHES_PER_RUN; batch++) {
                    int deleted = tenant.channels().janitor(ClientRoles.AUTHENTICATED, p.schema(), rt);
                    if (deleted < 0) {
                        log.warn(
                                "[MessagesJanitorFailed] project {}: its {}.aura_janitor() failed or timed out",
                                p.projectId(),
                                rt);
                        break;
                    }
                    if (deleted < RealtimeSchemas.JANITOR_BATCH) {
                        break;
                    }
                }
            }
        } catch (SQLException | TenantDb.Unavailable | ChannelChecks.Busy | RuntimeException e) {
            log.warn("[MessagesJanitorFailed] janitor run stopped: {}", e.getMessage());
        }
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
    }
}
