package dev.aura.realtime.cdc.upkeep;

import dev.aura.realtime.cdc.identity.ProjectIdentity;
import dev.aura.realtime.cdc.provision.RealtimeSchemas;
import dev.aura.realtime.cdc.tenant.ConnectionShare;
import dev.aura.realtime.cdc.tenant.RunnerSession;
import dev.aura.realtime.cdc.tenant.TenantDb;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the projects' realtime schemas in place and their messages tables short (docs/design.md
 * H2): every {@code provisionPeriod} it provisions projects registered since ({@link
 * RealtimeSchemas#ensureAll}, platform SQL, no tenant code), and every {@code janitorPeriod}, on
 * the leading replica only (replicas deleting the same rows at once would wait on each other's row
 * locks), it deletes messages older than the retention through each project's
 * {@code aura_janitor(max_rows)} on the tenant pool (the table is the tenant's: its triggers must
 * never run in a platform session), {@link #BATCH} rows per transaction until a batch comes back
 * short or the project's {@link #BUDGET_PER_PROJECT} is spent, so one project's backlog cannot
 * hold the run. The janitor commits tenant code, so it runs only while the confinement guard is in
 * place ({@code provision.Confinement}). One platform thread; {@link #close()} is idempotent.
 */
public final class RealtimeUpkeep implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RealtimeUpkeep.class);
    /**
     * Rows one janitor transaction deletes: small enough to finish well within the tenant
     * statement timeout (default 250 ms) on an indexed table.
     */
    static final int BATCH = 1_000;
    /** How long one janitor run works on one project before it moves on (the rest waits for the next run). */
    static final Duration BUDGET_PER_PROJECT = Duration.ofSeconds(10);

    private final RealtimeSchemas schemas;
    private final TenantDb tenant;
    private final BooleanSupplier leading;
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("aura-realtime-upkeep").daemon().factory());

    /** @param leading whether this replica holds the lease now (the janitor runs only then) */
    public RealtimeUpkeep(RealtimeSchemas schemas, TenantDb tenant, BooleanSupplier leading) {
        this.schemas = schemas;
        this.tenant = tenant;
        this.leading = leading;
    }

    public void start(Duration provisionPeriod, Duration janitorPeriod) {
        scheduler.scheduleWithFixedDelay(this::provision, 0, provisionPeriod.toMillis(), TimeUnit.MILLISECONDS);
        scheduler.scheduleWithFixedDelay(
                this::janitor, janitorPeriod.toMillis(), janitorPeriod.toMillis(), TimeUnit.MILLISECONDS);
    }

    void provision() {
        try {
            schemas.ensureAll();
            schemas.audit();
        } catch (SQLException | RuntimeException e) {
            log.warn("[RealtimeSchemaFailed] could not provision the realtime schemas: {}", e.getMessage());
        }
    }

    /**
     * One janitor run over every provisioned project, when leading.
     *
     * @return rows deleted in this run
     */
    public long janitor() {
        if (!leading.getAsBoolean() || tenant.status().off()) {
            return 0;
        }
        if (!schemas.confinement().status().guarded()) {
            return 0; // it commits tenant code: refused while the confinement is unguarded ([ConfinementUnguarded])
        }
        long total = 0;
        try {
            for (RealtimeSchemas.Provisioned p : schemas.provisioned()) {
                String rt = RealtimeSchemas.nameOf(p.projectId());
                long until = System.nanoTime() + BUDGET_PER_PROJECT.toNanos();
                while (true) {
                    int deleted = sweep(new ProjectIdentity(p.projectId()), p.schema(), rt, BATCH);
                    if (deleted < 0) {
                        log.warn(
                                "[MessagesJanitorFailed] project {}: its {}.aura_janitor() failed or timed out",
                                p.projectId(),
                                rt);
                        break;
                    }
                    total += deleted;
                    if (deleted < BATCH || System.nanoTime() > until) {
                        break;
                    }
                }
            }
        } catch (SQLException | TenantDb.Unavailable | ConnectionShare.Busy | RuntimeException e) {
            log.warn("[MessagesJanitorFailed] janitor run stopped: {}", e.getMessage());
        }
        return total;
    }

    /**
     * Deletes at most {@code maxRows} of the project's messages older than the retention or past
     * their {@code expires_at} through its {@code aura_janitor(max_rows)}, as the project's
     * authenticated role on the project's login, and commits; in the tenant pool's channel share
     * ({@link TenantDb#channelShare}), with the private-channel checks. The tenant owns (and may
     * redefine) that function: it runs with the project's privileges only.
     *
     * @return rows deleted, or -1 when the project's function failed
     */
    private int sweep(ProjectIdentity project, String projectSchema, String realtimeSchema, int maxRows)
            throws TenantDb.Unavailable, ConnectionShare.Busy {
        try {
            return tenant.channelShare()
                    .admitted(
                            projectSchema,
                            () -> tenant.projectSession(
                                    project, "{}", projectSchema, RunnerSession.Mode.WRITE_COMMIT, s -> {
                                        List<String[]> rows = s.viaRunner(
                                                project.runner(ProjectIdentity.AUTHENTICATED),
                                                "SELECT ARRAY[" + ident(realtimeSchema)
                                                        + ".aura_janitor($1[1]::integer)::text]",
                                                new Object[] {Integer.toString(maxRows)});
                                        return Integer.parseInt(rows.get(0)[0]);
                                    }));
        } catch (RunnerSession.TenantFailure f) {
            return -1;
        }
    }

    private static String ident(String name) {
        return "\"" + name.replace("\"", "\"\"") + "\"";
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
    }
}
