package dev.aura.realtime.front.relay;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.UsageReport;
import dev.aura.realtime.front.log.LogCode;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.Message;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The replicas' per-project counts (docs/design.md D8): every {@code interval} this replica
 * publishes its own ({@link UsageReport} on {@link Subjects#USAGE}, at most
 * {@link #PROJECTS_PER_MESSAGE} projects per message) and keeps every other replica's last
 * counts per project. Reports go out on the wall clock's multiples of {@code interval} (just
 * after each second ends, with the default 1 s), because their rates are those of the last whole
 * wall-clock second: published at any other point, what a replica knows of the others' last
 * second would be up to a second older still, and a burst on two replicas would pass the budget
 * twice over for two seconds instead of one; {@link #others} sums those not older than three intervals (a replica that
 * stopped reporting stops counting after that). Core NATS, no persistence: a report lost on the
 * way is replaced by the next one. Thread-safe; one scheduler thread publishes, the jnats
 * dispatcher receives.
 */
public final class NatsUsageExchange implements UsageBoard, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(NatsUsageExchange.class);
    /** How long after a multiple of the interval a report goes out: the second it reports has ended. */
    static final long PAST_BOUNDARY_MS = 5;
    /** Keeps each message far below NATS' default 1 MB payload limit (about 60 bytes a project). */
    static final int PROJECTS_PER_MESSAGE = 2_000;

    private record Stamped(UsageReport.Counts counts, long atMs) {}

    private final Connection connection;
    private final String instanceId;
    private final ObjectMapper mapper;
    private final Clock clock;
    private final Duration interval;
    /** project id → replica id → that replica's last counts. */
    private final Map<String, Map<String, Stamped>> reported = new ConcurrentHashMap<>();

    private final AtomicBoolean closed = new AtomicBoolean();
    private ScheduledExecutorService scheduler;
    private Dispatcher dispatcher;

    public NatsUsageExchange(
            Connection connection, String instanceId, ObjectMapper mapper, Clock clock, Duration interval) {
        this.connection = connection;
        this.instanceId = instanceId;
        this.mapper = mapper;
        this.clock = clock;
        this.interval = interval;
    }

    /** Starts receiving the others' reports and publishing {@code local}'s every interval. */
    public void start(Supplier<Map<String, UsageReport.Counts>> local) {
        dispatcher = connection.createDispatcher(this::onReport);
        dispatcher.subscribe(Subjects.USAGE);
        scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "aura-usage-report");
            t.setDaemon(true);
            return t;
        });
        scheduleNext(local);
    }

    /** Schedules the next report just after the wall clock's next multiple of the interval. */
    private void scheduleNext(Supplier<Map<String, UsageReport.Counts>> local) {
        long ms = interval.toMillis();
        long delay = ms - Math.floorMod(clock.millis(), ms) + PAST_BOUNDARY_MS;
        try {
            scheduler.schedule(
                    () -> {
                        publish(local);
                        scheduleNext(local);
                    },
                    delay,
                    TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) { // closed
            log.debug("usage reports stopped: {}", e.toString());
        }
    }

    @Override
    public UsageReport.Counts others(String projectId) {
        Map<String, Stamped> byReplica = reported.get(projectId);
        if (byReplica == null) {
            return ZERO;
        }
        long oldest = clock.millis() - 3 * interval.toMillis();
        int users = 0;
        int joins = 0;
        int events = 0;
        long bytes = 0;
        int presence = 0;
        int checks = 0;
        long registryBytes = 0;
        long presenceBytes = 0;
        long resumeBytes = 0;
        int refused = 0;
        for (Stamped s : byReplica.values()) {
            if (s.atMs() < oldest) {
                continue;
            }
            users += s.counts().users();
            joins += s.counts().joins();
            events += s.counts().events();
            bytes += s.counts().bytes();
            presence += s.counts().presence();
            checks += s.counts().checks();
            registryBytes += s.counts().registryBytes();
            presenceBytes += s.counts().presenceBytes();
            resumeBytes += s.counts().resumeBytes();
            refused += s.counts().refused();
        }
        return new UsageReport.Counts(
                users, joins, events, bytes, presence, checks, registryBytes, presenceBytes, resumeBytes, refused);
    }

    private void publish(Supplier<Map<String, UsageReport.Counts>> local) {
        try {
            List<Map.Entry<String, UsageReport.Counts>> entries =
                    new ArrayList<>(local.get().entrySet());
            for (int from = 0; from < entries.size(); from += PROJECTS_PER_MESSAGE) {
                Map<String, UsageReport.Counts> chunk = new HashMap<>();
                for (Map.Entry<String, UsageReport.Counts> e :
                        entries.subList(from, Math.min(entries.size(), from + PROJECTS_PER_MESSAGE))) {
                    chunk.put(e.getKey(), e.getValue());
                }
                connection.publish(Subjects.USAGE, mapper.writeValueAsBytes(new UsageReport(instanceId, chunk)));
            }
            forgetStale();
        } catch (IOException | RuntimeException e) {
            LogCode.UsageReportFailed.warn(log, "publishing: {}", e.toString());
        }
    }

    private void onReport(Message msg) {
        UsageReport report;
        try {
            report = mapper.readValue(msg.getData(), UsageReport.class);
        } catch (IOException e) {
            LogCode.UsageReportFailed.warn(log, "undecodable report on {}: {}", msg.getSubject(), e.toString());
            return;
        }
        if (report.instance() == null || report.instance().equals(instanceId) || report.projects() == null) {
            return;
        }
        long now = clock.millis();
        // compute, not computeIfAbsent + put: forgetStale may drop a project's map concurrently
        report.projects()
                .forEach((project, counts) -> reported.compute(project, (k, byReplica) -> {
                    Map<String, Stamped> m = byReplica == null ? new ConcurrentHashMap<>() : byReplica;
                    m.put(report.instance(), new Stamped(counts, now));
                    return m;
                }));
    }

    /** Drops reports older than three intervals, and projects left without any. */
    private void forgetStale() {
        long oldest = clock.millis() - 3 * interval.toMillis();
        for (String project : reported.keySet()) {
            reported.computeIfPresent(project, (k, byReplica) -> {
                byReplica.values().removeIf(s -> s.atMs() < oldest);
                return byReplica.isEmpty() ? null : byReplica;
            });
        }
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        if (scheduler != null) {
            scheduler.shutdownNow();
        }
        if (dispatcher != null) {
            try {
                connection.closeDispatcher(dispatcher);
            } catch (RuntimeException e) { // the connection is already closed: nothing left to stop
                log.debug("closing the usage dispatcher: {}", e.toString());
            }
        }
    }
}
