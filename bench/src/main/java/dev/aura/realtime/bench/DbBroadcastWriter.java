package dev.aura.realtime.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/** Figure 10's writer: messages through {@code realtime.send()} or plain table inserts, stamped with their build time. */
final class DbBroadcastWriter {
    private DbBroadcastWriter() {}

    static String sql(Stack s, String rt, DbBroadcastBench.Path path) {
        String stamp = "(extract(epoch from clock_timestamp()) * 1000000)::bigint";
        return path == DbBroadcastBench.Path.BROADCAST
                ? "SELECT count(*) FROM (SELECT " + rt + ".send(jsonb_build_object('t', " + stamp + ", 'n', g), 'm', '"
                        + DbBroadcastBench.TOPIC + "', true) FROM generate_series(1, ?) g) x"
                : "INSERT INTO " + s.table(DbBroadcastBench.PLAIN) + "(t, n) SELECT " + stamp
                        + ", g FROM generate_series(1, ?) g";
    }

    /**
     * Commits {@code rate/100} rows of the path every 10 ms for {@code seconds}, over one
     * connection per 2,500 msg/s ({@code send()} is a plpgsql call with an exception block, a
     * subtransaction per message: one connection alone does not reach 10,000/s on this box);
     * returns the rows written.
     */
    static long write(Stack s, String rt, DbBroadcastBench.Path path, int rate, int seconds) throws Exception {
        int writers = Math.max(1, (rate + 2_499) / 2_500);
        int perTick = Math.max(1, rate / 100 / writers);
        AtomicLong sent = new AtomicLong();
        List<Connection> conns = new ArrayList<>();
        ScheduledExecutorService timer = Executors.newScheduledThreadPool(writers);
        try {
            for (int w = 0; w < writers; w++) {
                Connection c = s.pg.connect();
                conns.add(c);
                PreparedStatement ps = c.prepareStatement(sql(s, rt, path));
                ps.setInt(1, perTick);
                timer.scheduleAtFixedRate(
                        () -> {
                            try {
                                ps.execute();
                                sent.addAndGet(perTick);
                            } catch (Exception e) {
                                System.err.println("dbcast writer: " + e.getMessage());
                            }
                        },
                        w * 10L / writers,
                        10,
                        TimeUnit.MILLISECONDS);
            }
            Procs.sleep(seconds * 1000L);
        } finally {
            timer.shutdown();
            timer.awaitTermination(10, TimeUnit.SECONDS);
            for (Connection c : conns) {
                c.close();
            }
        }
        return sent.get();
    }
}
