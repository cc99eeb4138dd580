package dev.aura.realtime.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.Arrays;

/**
 * The reconnect storm's writer: one row per transaction ({@code note = 'row-<n>'}), paced at
 * {@code rowsPerSecond}, each row's {@code System.nanoTime()} taken before the INSERT was sent
 * ({@link #startedAt}) and after its commit returned ({@link #committedAt}).
 */
final class StormWriter implements AutoCloseable {
    private final Stack s;
    private final String table;
    private final long periodNanos;
    private long[] started = new long[4096];
    private long[] committed = new long[4096];
    private volatile int rows;
    private volatile boolean stopped;
    private volatile Exception failure;
    private Thread thread;

    StormWriter(Stack s, String table, int rowsPerSecond) {
        this.s = s;
        this.table = table;
        this.periodNanos = 1_000_000_000L / Math.max(1, rowsPerSecond);
    }

    void start() {
        thread = Thread.ofPlatform().daemon().name("storm-writer").start(this::write);
    }

    private void write() {
        try (Connection c = s.pg.connect();
                PreparedStatement insert = c.prepareStatement("INSERT INTO " + s.table(table) + "(note) VALUES (?)")) {
            c.setAutoCommit(true);
            long next = System.nanoTime();
            while (!stopped) {
                int n = rows;
                if (n == started.length) {
                    started = Arrays.copyOf(started, n * 2);
                    committed = Arrays.copyOf(committed, n * 2);
                }
                insert.setString(1, "row-" + n);
                started[n] = System.nanoTime();
                insert.executeUpdate();
                committed[n] = System.nanoTime();
                rows = n + 1;
                next += periodNanos;
                long sleep = next - System.nanoTime();
                if (sleep > 0) {
                    Thread.sleep(sleep / 1_000_000, (int) (sleep % 1_000_000));
                }
            }
        } catch (Exception e) {
            failure = e;
        }
    }

    /** Stops the writer and waits for its last row. */
    void stop() throws InterruptedException {
        stopped = true;
        if (thread != null) {
            thread.join(10_000);
        }
        if (failure != null) {
            throw new IllegalStateException("the storm writer failed", failure);
        }
    }

    /** Rows written (read after {@link #stop}). */
    int rows() {
        return rows;
    }

    long startedAt(int row) {
        return started[row];
    }

    long committedAt(int row) {
        return committed[row];
    }

    @Override
    public void close() throws InterruptedException {
        stopped = true;
        if (thread != null) {
            thread.join(10_000);
        }
    }
}
