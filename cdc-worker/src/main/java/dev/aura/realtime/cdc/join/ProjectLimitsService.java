package dev.aura.realtime.cdc.join;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.cdc.catalog.ProjectLimitsTable;
import dev.aura.realtime.cdc.failure.LogCode;
import dev.aura.realtime.common.wire.ProjectLimits;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.WireJson;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.Message;
import java.io.IOException;
import java.sql.SQLException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers ws-front's "what are this project's limits?" on {@link Subjects#PROJECT_LIMITS} from
 * {@code aura_platform.project_limits} (queue group {@code aura-cdc-worker}: any replica, leader or
 * not, answers). Each ws-front asks once per project per {@code PROJECT_LIMITS_REFRESH_MS}.
 *
 * <p>Threads: answers are computed on virtual threads, at most {@code maxConcurrent} at once;
 * over that, or when the database fails, no answer is sent and ws-front keeps the limits it knew
 * (else the global defaults) and asks again later.
 */
public final class ProjectLimitsService implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ProjectLimitsService.class);

    private final Connection nats;
    private final ProjectLimitsTable table;
    private final ObjectMapper mapper = WireJson.mapper();
    private final ExecutorService workers = Executors.newVirtualThreadPerTaskExecutor();
    private final Semaphore admission;
    private Dispatcher dispatcher;

    public ProjectLimitsService(Connection nats, ProjectLimitsTable table, int maxConcurrent) {
        this.nats = nats;
        this.table = table;
        this.admission = new Semaphore(maxConcurrent);
    }

    public void start() {
        dispatcher = nats.createDispatcher();
        dispatcher.subscribe(Subjects.PROJECT_LIMITS, SubscriptionCheckService.QUEUE, msg -> {
            if (admission.tryAcquire()) {
                workers.execute(() -> answer(msg));
            }
        });
    }

    private void answer(Message msg) {
        try {
            ProjectLimits.Request req = mapper.readValue(msg.getData(), ProjectLimits.Request.class);
            ProjectLimits limits = table.of(req.projectId());
            if (msg.getReplyTo() != null) {
                nats.publish(msg.getReplyTo(), mapper.writeValueAsBytes(limits));
            }
        } catch (IOException e) {
            log.debug("undecodable project limits request: {}", e.toString());
        } catch (SQLException | RuntimeException e) {
            log.warn("[{}] project limits not answered: {}", LogCode.PROJECT_LIMITS_DB_FAILED, e.toString());
        } finally {
            admission.release();
        }
    }

    @Override
    public void close() {
        if (dispatcher != null) {
            try {
                nats.closeDispatcher(dispatcher);
            } catch (RuntimeException e) { // the connection is already closed: nothing left to stop
                log.debug("closing the project limits dispatcher: {}", e.toString());
            }
            dispatcher = null;
        }
        workers.shutdownNow();
    }
}
