package dev.aura.realtime.bench;

import dev.aura.realtime.testkit.ServiceProcess;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The ws-front figures that share one pinned ws-front process: 3 (fan-out against raw NATS), 4a
 * (heap per idle connection) and 4c (100,000 connections, one broadcast to all). ws-front runs
 * with one event loop ({@code WS_IO_THREADS=1}) and, like nats-server for the baseline, is pinned to
 * CPU 0; this load generator is pinned to CPU 1. The ws-front profile (JFR) is summarised into the
 * fan-out evidence when figure 3 misses. Used by {@link BenchMain} and {@link FanoutMain}.
 *
 * @param clients fan-out subscribers (figure 3)
 * @param rounds bursts of each side, alternating (figure 3 reports the median round)
 * @param idleClients connections of figure 4a
 * @param scaleClients connections of figure 4c; 0 skips it
 */
record FanoutFigures(
        int clients,
        int burstRate,
        int burstSeconds,
        int lightRate,
        int lightSeconds,
        int rounds,
        int idleClients,
        int scaleClients) {

    /**
     * The ws-front settings of these figures: no rate or idle limit gets in the way of the load, and
     * the event loop queue's delay bound ({@code WS_MAX_QUEUE_DELAY_MS}, 5 s by default, which
     * closes the connections of a message that waited longer) is lifted so that a burst above
     * capacity measures capacity and queueing latency, as the raw NATS baseline does, instead of
     * shedding; the bound itself is tested in ws-front's {@code WritePathTest}.
     */
    static final Map<String, String> FRONT_ENV = Map.of(
            "WS_MAX_EVENTS_PER_SECOND", "1000000",
            "WS_IDLE_TIMEOUT_MS", "3600000",
            "WS_IO_THREADS", "1",
            "WS_MAX_JOINS_PER_SECOND", "1000000",
            "WS_MAX_QUEUE_DELAY_MS", "600000");

    void run(Stack s, Report report, Path runDir) throws Exception {
        Path frontJfr = runDir.resolve("ws-front-fanout.jfr");
        ServiceProcess front = s.startFront(FRONT_ENV, s.profiler(frontJfr));
        long natsPid = s.nats.pid();
        if (Procs.cpus() >= 2) {
            Procs.pin(front.pid(), "0");
            Procs.pin(natsPid, "0");
            Procs.pin(ProcessHandle.current().pid(), "1");
        }
        new FanoutBench(s, report)
                .run(clients, burstRate, burstSeconds, lightRate, lightSeconds, rounds, front.pid(), natsPid, frontJfr);
        // the profile of interest is the fan-out: dump it before the connection figures add their own samples
        if (s.profile) {
            Procs.run(List.of(Procs.JDK + "jcmd", Long.toString(front.pid()), "JFR.dump", "filename=" + frontJfr));
        }
        String summary = s.profile
                ? JfrHotMethods.summarize(frontJfr, null, 10)
                : "(no profile in a timed run: run `scripts/bench.sh --profile` for one)";
        report.evidence.replaceAll(e -> e.replace(FanoutBench.FANOUT_JFR_PLACEHOLDER, summary));
        System.out.println(summary);
        IdleMemoryBench.run(s, report, front.pid(), idleClients);
        if (scaleClients > 0) {
            ScaleBench.run(s, report, front.pid(), scaleClients);
        }
        s.stopFront();
    }
}
