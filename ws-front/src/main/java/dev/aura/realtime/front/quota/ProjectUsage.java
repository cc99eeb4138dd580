package dev.aura.realtime.front.quota;

import dev.aura.realtime.common.wire.UsageReport;
import java.util.Map;

/**
 * One project's use as the inspector shows it (docs/design.md D9).
 *
 * @param here this replica: connections now, the last whole second's admissions and refusals
 * @param others the other replicas' last reports, summed (up to one report interval old)
 * @param refusedHere refusals on this replica since it started counting the project, by what was refused
 * @param quota the limits in force
 */
public record ProjectUsage(
        UsageReport.Counts here, UsageReport.Counts others, Map<Refusal, Long> refusedHere, ProjectQuota quota) {}
