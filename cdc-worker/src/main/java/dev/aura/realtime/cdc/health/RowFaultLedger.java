package dev.aura.realtime.cdc.health;

import dev.aura.realtime.cdc.failure.RowFault;
import java.time.Clock;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What {@code /health} says of the changes that could not be delivered as they are (docs/design.md
 * C13, C14; docs/operations.md "Quarantine"): changes quarantined by this process since it started,
 * per project, and the projects whose changes go through their late lane now. Identifiers and
 * codes only: never a tenant's data. At most {@value #MAX_PROJECTS} projects are listed (the ones
 * quarantined most recently). Thread-safe.
 */
public final class RowFaultLedger {
    static final int MAX_PROJECTS = 100;

    /** One project's quarantined changes. */
    public record ProjectFaults(long rows, RowFault lastFault, Instant lastAt) {}

    /** One consistent reading. */
    public record Snapshot(long rows, Map<String, ProjectFaults> projects, Map<String, Long> lateBytes) {}

    private final Clock clock;
    private long rows;
    private final LinkedHashMap<String, ProjectFaults> projects = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, ProjectFaults> eldest) {
            return size() > MAX_PROJECTS;
        }
    };
    private Map<String, Long> lateBytes = Map.of();

    public RowFaultLedger(Clock clock) {
        this.clock = clock;
    }

    public synchronized void quarantined(String projectId, RowFault fault) {
        rows++;
        ProjectFaults before = projects.get(projectId);
        projects.put(projectId, new ProjectFaults(before == null ? 1 : before.rows() + 1, fault, clock.instant()));
    }

    /** The late lanes now: bytes waiting per project. */
    public synchronized void late(Map<String, Long> bytesByProject) {
        lateBytes = Map.copyOf(bytesByProject);
    }

    public synchronized Snapshot snapshot() {
        return new Snapshot(rows, new LinkedHashMap<>(projects), lateBytes);
    }
}
