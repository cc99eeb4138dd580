package dev.aura.realtime.front.relay;

import dev.aura.realtime.common.wire.UsageReport;

/** The other replicas' last reported counts of a project, summed; zeros when none reported. */
public interface UsageBoard {
    UsageReport.Counts others(String projectId);

    UsageReport.Counts ZERO = new UsageReport.Counts(0, 0, 0, 0, 0, 0, 0, 0);

    /** A single replica: nobody else counts. */
    UsageBoard ALONE = projectId -> ZERO;
}
