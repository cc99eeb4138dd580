package dev.aura.realtime.e2e.faults;

import dev.aura.realtime.testkit.PostgresServer;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Inserts {@code (id)} rows one transaction each at a fixed rate on its own thread, and records
 * which ids are known to be committed. Survives Postgres restarts and terminated sessions: when a
 * statement fails, it reconnects and asks the table whether that id committed (the commit may have
 * succeeded before the connection broke).
 */
public final class SteadyWriter implements AutoCloseable {
    private final PostgresServer pg;
    private final String table;
    private final int rowsPerSecond;
    private final Set<Integer> committed = ConcurrentHashMap.newKeySet();
    private final AtomicInteger nextId = new AtomicInteger(1);
    private final Thread thread;
    private volatile boolean running = true;
    private volatile int failures;

    public SteadyWriter(PostgresServer pg, String table, int rowsPerSecond) {
        this.pg = pg;
        this.table = table;
        this.rowsPerSecond = rowsPerSecond;
        this.thread = Thread.ofPlatform().name("steady-writer").daemon().start(this::run);
    }

    private void run() {
        long periodNanos = 1_000_000_000L / rowsPerSecond;
        long next = System.nanoTime();
        Connection c = null;
        while (running) {
            int id = nextId.get();
            try {
                if (c == null) {
                    c = pg.connect();
                }
                try (Statement s = c.createStatement()) {
                    s.execute("INSERT INTO " + table + "(id) VALUES (" + id + ") ON CONFLICT DO NOTHING");
                }
                committed.add(id);
                nextId.incrementAndGet();
            } catch (RuntimeException | SQLException broken) {
                failures++;
                close(c);
                c = null;
                if (existsAfterReconnect(id)) {
                    committed.add(id);
                    nextId.incrementAndGet();
                }
                sleepNanos(50_000_000L);
                next = System.nanoTime();
                continue;
            }
            next += periodNanos;
            long wait = next - System.nanoTime();
            if (wait > 0) {
                sleepNanos(wait);
            } else if (wait < -1_000_000_000L) {
                next = System.nanoTime(); // fell behind by a second: do not burst to catch up
            }
        }
        close(c);
    }

    private boolean existsAfterReconnect(int id) {
        try (Connection c = pg.connect();
                Statement s = c.createStatement();
                var rs = s.executeQuery("SELECT 1 FROM " + table + " WHERE id = " + id)) {
            return rs.next();
        } catch (RuntimeException | SQLException stillDown) {
            return false; // retried with the same id; ON CONFLICT makes a committed retry harmless
        }
    }

    private static void close(Connection c) {
        if (c != null) {
            try {
                c.close();
            } catch (SQLException ignored) {
                // already broken
            }
        }
    }

    private static void sleepNanos(long nanos) {
        try {
            Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Ids known committed so far (a live view). */
    public Set<Integer> committed() {
        return committed;
    }

    public int failures() {
        return failures;
    }

    /** Stops writing and returns the committed ids. */
    public Set<Integer> stop() throws InterruptedException {
        running = false;
        thread.join(10_000);
        return Set.copyOf(committed);
    }

    @Override
    public void close() throws InterruptedException {
        stop();
    }
}
