package dev.aura.realtime.e2e.resume;

import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.Waits;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;

/**
 * One writer thread inserting a row every {@code period} with JDBC, one autocommit transaction
 * each, ids 1, 2, 3, ...: being the only writer, its insertion order is the commit order. Fails
 * on the first error (Postgres is never disturbed in these tests).
 */
final class RowWriter implements AutoCloseable {
    private final PostgresServer pg;
    private final IntFunction<String> insert;
    private final long periodNanos;
    private final List<Integer> committed = new ArrayList<>();
    private final Thread thread;
    private volatile boolean running = true;
    private volatile Exception failure;

    /** {@code insert} is the SQL statement inserting row {@code id}. */
    RowWriter(PostgresServer pg, IntFunction<String> insert, Duration period) {
        this.pg = pg;
        this.insert = insert;
        this.periodNanos = period.toNanos();
        this.thread = Thread.ofPlatform().name("resume-row-writer").daemon().start(this::run);
    }

    private void run() {
        try (Connection c = pg.connect();
                Statement s = c.createStatement()) {
            long next = System.nanoTime();
            for (int id = 1; running; id++) {
                s.execute(insert.apply(id));
                synchronized (committed) {
                    committed.add(id);
                }
                next += periodNanos;
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                } else if (wait < -200_000_000L) {
                    next = System.nanoTime(); // fell behind (a busy machine): no burst to catch up
                }
            }
        } catch (SQLException | RuntimeException e) {
            failure = e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The committed ids so far, in commit order. */
    List<Integer> committed() {
        synchronized (committed) {
            return List.copyOf(committed);
        }
    }

    int count() {
        synchronized (committed) {
            return committed.size();
        }
    }

    /** Waits until {@code n} more rows than now are committed. */
    void awaitMore(int n) {
        int target = count() + n;
        Waits.until(
                target + " committed rows",
                Duration.ofSeconds(10L + n / 10),
                Duration.ofMillis(20),
                () -> {
                    if (failure != null) {
                        throw new AssertionError("the writer failed", failure);
                    }
                    return count() >= target;
                },
                () -> count() + " committed");
    }

    /** Stops the thread; returns every committed id in commit order. */
    List<Integer> stop() throws InterruptedException {
        running = false;
        thread.join(10_000);
        if (failure != null) {
            throw new AssertionError("the writer failed", failure);
        }
        return committed();
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.join(10_000);
    }
}
