package dev.aura.realtime.bench;

/** Figure 10's measurements ({@link DbBroadcastBench}): a steady rate or a backlog of one path. */
final class DbBroadcastResults {
    private DbBroadcastResults() {}

    /** One steady-rate measurement of one path. */
    record Rate(
            DbBroadcastBench.Path path,
            int rate,
            int seconds,
            long sent,
            double sentPerSecond,
            long jsReceived,
            double jsPerSecond,
            Stats js,
            long javaReceived,
            long javaExpected,
            Stats java) {
        String describe() {
            return String.format(
                    "%s msg/s delivered to realtime-js (%d/%d), %s; Java clients %s (%d/%d)",
                    Report.f0(jsPerSecond), jsReceived, sent, js.summary(), java.summary(), javaReceived, javaExpected);
        }
    }

    /** One backlog measurement of one path: {@code messages} drained at realtime-js. */
    record Backlog(
            DbBroadcastBench.Path path,
            long messages,
            long jsReceived,
            double jsPerSecond,
            long natsReceived,
            double natsPerSecond) {}
}
