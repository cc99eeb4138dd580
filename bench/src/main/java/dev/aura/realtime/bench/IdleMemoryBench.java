package dev.aura.realtime.bench;

import java.nio.file.Files;
import java.util.List;

/**
 * Figure 4a: ws-front heap per idle connection. Heap after a full GC (jcmd GC.run, then
 * GC.heap_info) with no client, then with N clients connected and joined to one channel
 * (broadcast only, no traffic; the idle timeout is raised so they stay).
 */
final class IdleMemoryBench {
    /** Issue 8's budget: 16 KiB of heap per idle joined connection. */
    static final Target TARGET = Target.of(Target.atMost("per", "heap per connection", 16 * 1024, "B"));

    private IdleMemoryBench() {}

    static void run(Stack s, Report report, long frontPid, int n) throws Exception {
        long before = Procs.heapUsedAfterGc(frontPid);
        try (WsClients clients = new WsClients(1)) {
            List<WsClients.Conn> conns = clients.connectMany(s.wsUri("1.0.0"), n, 200, (c, t) -> {});
            clients.joinAll(conns, "realtime:idle", WsClients.broadcastConfig(), 200);
            Procs.sleep(2000); // let the server settle after the joins before the GC
            long after = Procs.heapUsedAfterGc(frontPid);
            double perConn = (after - before) / (double) n;
            report.row(
                    "4a. ws-front heap per idle connection (" + n + " sockets, joined)",
                    Report.f0(perConn) + " B/connection (heap " + (before >> 20) + " → " + (after >> 20)
                            + " MB after full GC)",
                    "– (no baseline: an absolute budget per connection; the heap before the connections is subtracted)",
                    "–",
                    TARGET,
                    TARGET.judgeOnce(java.util.Map.of("per", perConn)));
            clients.closeAll(conns);
        }
        Procs.sleep(2000); // the server notices the closes
        long closed = Procs.heapUsedAfterGc(frontPid);
        report.note("4a: heap after full GC " + (before >> 20) + " MB before the " + n + " connections, "
                + (closed >> 20) + " MB once they closed (what closed connections leave behind: "
                + Report.f0((closed - before) / (double) n) + " B each)");
        Files.writeString(
                s.runDir.resolve("ws-front-histogram-closed.txt"),
                Procs.run(List.of(Procs.JDK + "jcmd", Long.toString(frontPid), "GC.class_histogram")));
    }
}
