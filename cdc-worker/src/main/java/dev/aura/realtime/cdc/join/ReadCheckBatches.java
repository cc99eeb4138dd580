package dev.aura.realtime.cdc.join;

import dev.aura.realtime.cdc.catalog.ProjectCatalog;
import dev.aura.realtime.cdc.identity.ProjectIdentity;
import dev.aura.realtime.cdc.provision.RealtimeSchemas;
import dev.aura.realtime.cdc.tenant.ConnectionShare;
import dev.aura.realtime.cdc.tenant.TenantDb;
import dev.aura.realtime.common.wire.ChannelAccess;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The read checks of private-channel joins (docs/design.md H1, "Join storms"), answered in
 * batches of one project taken fairly from a {@link FairQueue}: one settings look-up per batch, and
 * all its checks in one tenant transaction with a savepoint, claims, topic and
 * {@code statement_timeout} per check ({@link ChannelChecks#readAll}). A batch stops starting
 * checks after {@link #SLICE}, so a project whose policies are slow holds a lane connection for one
 * check's timeout at most before the next project's turn; one project runs at most one batch at a
 * time, so it never holds more than one of the lane's connections for its read checks.
 */
final class ReadCheckBatches implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ReadCheckBatches.class);
    /** How long a batch keeps starting checks before it yields its connection. */
    static final Duration SLICE = Duration.ofMillis(20);

    /** One read check waiting: what to ask and where the answer goes. */
    record Ask(UUID project, String pgRole, String claims, String topic, int bytes, String replyTo) {}

    private final ProjectCatalog projects;
    private final RealtimeSchemas schemas;
    private final TenantDb tenant;
    private final ChannelChecks checks;
    private final BiConsumer<String, ChannelAccess.Reply> reply;
    private final FairQueue<Ask> queue;

    /** @param workers batches at once: the lane's connections ({@code CDC_TENANT_JOIN_CONNECTIONS}) */
    ReadCheckBatches(
            ProjectCatalog projects,
            RealtimeSchemas schemas,
            TenantDb tenant,
            ChannelChecks checks,
            int workers,
            BiConsumer<String, ChannelAccess.Reply> reply) {
        this.projects = projects;
        this.schemas = schemas;
        this.tenant = tenant;
        this.checks = checks;
        this.reply = reply;
        this.queue = new FairQueue<>(
                "aura-read-check",
                new FairQueue.Limits(
                        workers,
                        1,
                        SubscriptionCheckService.MAX_BATCH,
                        ChannelAccessService.MAX_IN_FLIGHT_PER_PROJECT * 4,
                        ChannelAccessService.MAX_IN_FLIGHT_BYTES / 4,
                        SubscriptionCheckService.MAX_WAIT),
                Ask::bytes,
                this::answer);
    }

    /** @return false when the project's queue is full: answer "try again" */
    boolean offer(Ask ask) {
        return queue.offer(ask.project().toString(), ask);
    }

    private List<Ask> answer(String projectId, List<Ask> batch, List<Ask> expired) {
        expired.forEach(a -> reply.accept(a.replyTo(), ChannelAccess.Reply.failed(ChannelAccessService.TRY_AGAIN)));
        if (batch.isEmpty()) {
            return List.of();
        }
        UUID project = batch.get(0).project();
        int answered = 0;
        try {
            Optional<ProjectCatalog.ChannelSettings> found = projects.channelSettings(project);
            if (found.isEmpty()) {
                batch.forEach(a -> reply.accept(
                        a.replyTo(),
                        ChannelAccess.Reply.failed("RealtimeDisabledForConfiguration: project " + project
                                + " is not registered for realtime")));
                return List.of();
            }
            ProjectCatalog.ChannelSettings settings = found.get();
            if (!schemas.ready(project) || tenant.status().off()) {
                batch.forEach(
                        a -> reply.accept(a.replyTo(), ChannelAccess.Reply.failed(ChannelAccessService.TRY_AGAIN)));
                return List.of();
            }
            List<ChannelChecks.ReadAsk> asks = new ArrayList<>(batch.size());
            batch.forEach(a -> asks.add(new ChannelChecks.ReadAsk(a.pgRole(), a.claims(), a.topic())));
            List<ChannelChecks.ReadVerdict> verdicts = checks.readAll(
                    ProjectIdentity.of(project),
                    settings.schema(),
                    RealtimeSchemas.nameOf(project.toString()),
                    asks,
                    SLICE);
            for (ChannelChecks.ReadVerdict v : verdicts) {
                Ask a = batch.get(answered++);
                if (v.failure() != null) {
                    ChannelAccessService.logDenied("read check", project, a.topic(), v.failure());
                }
                reply.accept(
                        a.replyTo(), ChannelAccess.Reply.read(settings.privateOnly(), v.broadcast(), v.presence()));
            }
            return List.copyOf(batch.subList(answered, batch.size()));
        } catch (SQLException | TenantDb.Unavailable | ConnectionShare.Busy | RuntimeException e) {
            if (!(e instanceof ConnectionShare.Busy)) {
                log.warn("[ChannelAccessDbFailed] read checks of project {}: {}", project, e.toString());
            }
            batch.subList(answered, batch.size())
                    .forEach(
                            a -> reply.accept(a.replyTo(), ChannelAccess.Reply.failed(ChannelAccessService.TRY_AGAIN)));
            return List.of();
        }
    }

    @Override
    public void close() {
        queue.close();
    }
}
