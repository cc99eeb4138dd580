package dev.aura.realtime.front.inspect;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.common.wire.UsageReport;
import dev.aura.realtime.front.fanout.CdcHealth;
import dev.aura.realtime.front.quota.ProjectQuota;
import dev.aura.realtime.front.quota.ProjectQuotas;
import dev.aura.realtime.front.quota.ProjectUsage;
import dev.aura.realtime.front.quota.Refusal;
import dev.aura.realtime.front.relay.HeldChanges;
import java.util.concurrent.CompletableFuture;

/**
 * What the inspector page shows of one project besides its channels (docs/design.md D9): the CDC
 * as this replica knows it ({@code cdc_active}, reason, the slot's lag), the project's use across
 * replicas (connections, joins, client messages, presence events and checks per second,
 * refusals) and its limits, and what its quarantine and late lane hold. Only the asked project's
 * numbers and the CDC status every project's clients are told anyway: never another project's,
 * never row data. Thread-safe.
 */
public final class ProjectInspector {
    private final ProjectQuotas quotas;
    private final CdcHealth cdc;
    private final HeldChanges held;
    private final String instanceId;

    public ProjectInspector(ProjectQuotas quotas, CdcHealth cdc, HeldChanges held, String instanceId) {
        this.quotas = quotas;
        this.cdc = cdc;
        this.held = held;
        this.instanceId = instanceId;
    }

    /** The project's status as JSON; completes once its held streams were read (never fails). */
    public CompletableFuture<ObjectNode> inspect(String projectId) {
        ProjectUsage usage = quotas.usage(projectId);
        CdcHealth.View view = cdc.view();
        return held.of(projectId).thenApply(h -> render(projectId, usage, view, h));
    }

    ObjectNode render(String projectId, ProjectUsage usage, CdcHealth.View view, HeldChanges.Snapshot h) {
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        out.put("project", projectId);
        out.put("instance", instanceId);
        ObjectNode c = out.putObject("cdc");
        if (view.active() == null) {
            c.putNull("cdc_active");
        } else {
            c.put("cdc_active", view.active());
        }
        c.put("reason", view.reason());
        c.put("status_age_ms", view.statusAgeMs());
        if (view.slotLagBytes() == null) {
            c.putNull("slot_lag_bytes");
        } else {
            c.put("slot_lag_bytes", view.slotLagBytes());
        }
        c.put("replication_ready", view.replicationReady());

        UsageReport.Counts here = usage.here();
        UsageReport.Counts others = usage.others();
        ObjectNode u = out.putObject("usage");
        pair(u, "connections", here.users(), others.users());
        pair(u, "joins_per_second", here.joins(), others.joins());
        pair(u, "events_per_second", here.events(), others.events());
        pair(u, "presence_events_per_second", here.presence(), others.presence());
        pair(u, "checks_per_second", here.checks(), others.checks());
        pair(u, "refused_per_second", here.refused(), others.refused());
        ObjectNode refused = u.putObject("refused_here");
        for (Refusal r : Refusal.values()) {
            refused.put(r.key(), usage.refusedHere().getOrDefault(r, 0L));
        }

        ProjectQuota q = usage.quota();
        out.putObject("limits")
                .put("max_concurrent_users", q.maxConcurrentUsers())
                .put("max_joins_per_second", q.maxJoinsPerSecond())
                .put("max_events_per_second", q.maxEventsPerSecond())
                .put("max_presence_events_per_second", q.maxPresenceEventsPerSecond())
                .put("max_checks_per_second", q.maxChecksPerSecond())
                .put("max_channels_per_client", q.maxChannelsPerClient());

        out.putObject("quarantine")
                .put("changes", h.quarantine().changes())
                .put("bytes", h.quarantine().bytes());
        out.putObject("late_lane")
                .put("changes", h.late().changes())
                .put("bytes", h.late().bytes());
        out.put("held_known", h.known());
        return out;
    }

    /** {@code {"total": here + others, "here": here}}. */
    private static void pair(ObjectNode parent, String name, long here, long others) {
        parent.putObject(name).put("total", here + others).put("here", here);
    }
}
