package dev.aura.realtime.cdc.join;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.ToIntFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Join-time checks of many projects answered fairly by a few workers, in batches of one project
 * (docs/design.md C7, "Join storms"). Each project has its own FIFO; projects with pending work
 * take turns round-robin, a worker takes up to {@code maxBatch} of one project's checks at a
 * time, and one project has at most {@code perProject} batches in flight, so a project that
 * floods, or whose policies are slow, waits behind its own checks while every other project's next
 * batch is taken at the next turn. What a batch costs (its round trips, its slow policies) is paid
 * by its project's turn only.
 *
 * <p>Bounds: at most {@code maxPendingPerProject} checks of one project and {@code maxPendingBytes}
 * request bytes of all projects wait; {@link #offer} refuses beyond them (the caller answers "try
 * again"). A check that waited longer than {@code maxWait} is handed to the {@link Handler} as
 * expired instead of run: ws-front gives up on it soon after.
 *
 * <p>Threads: {@code workers} platform threads (they block on JDBC); {@link #offer} from any thread.
 */
final class FairQueue<T> implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(FairQueue.class);

    /** Answers one batch of one project's checks. */
    interface Handler<T> {
        /**
         * @param batch the checks to answer, oldest first
         * @param expired checks that waited too long: answer "try again"
         * @return the checks of {@code batch} not answered (its time slice ran out), put back first in line
         */
        List<T> handle(String project, List<T> batch, List<T> expired);
    }

    private record Entry<T>(T item, long enqueuedNanos, int bytes) {}

    private static final class Project<T> {
        final String id;
        final ArrayDeque<Entry<T>> pending = new ArrayDeque<>();
        int inFlight;
        boolean inTurn;

        Project(String id) {
            this.id = id;
        }
    }

    private final Handler<T> handler;
    private final ToIntFunction<T> bytesOf;
    private final int maxBatch;
    private final int perProject;
    private final int maxPendingPerProject;
    private final long maxPendingBytes;
    private final long maxWaitNanos;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition work = lock.newCondition();
    private final Map<String, Project<T>> projects = new HashMap<>();
    private final ArrayDeque<Project<T>> turns = new ArrayDeque<>();
    private final List<Thread> threads = new ArrayList<>();
    private long pendingBytes;
    private boolean closed;

    /** What bounds a queue: sizes, waits and workers. */
    record Limits(
            int workers,
            int perProject,
            int maxBatch,
            int maxPendingPerProject,
            long maxPendingBytes,
            Duration maxWait) {}

    FairQueue(String name, Limits limits, ToIntFunction<T> bytesOf, Handler<T> handler) {
        this.handler = handler;
        this.bytesOf = bytesOf;
        this.maxBatch = Math.max(1, limits.maxBatch());
        this.perProject = Math.max(1, limits.perProject());
        this.maxPendingPerProject = limits.maxPendingPerProject();
        this.maxPendingBytes = limits.maxPendingBytes();
        this.maxWaitNanos = limits.maxWait().toNanos();
        for (int i = 0; i < Math.max(1, limits.workers()); i++) {
            threads.add(Thread.ofPlatform().name(name + "-" + i).daemon().start(this::work));
        }
    }

    /**
     * Queues {@code item} for {@code project}.
     *
     * @return false when the project's queue (or all projects' bytes) is full: answer "try again"
     */
    boolean offer(String project, T item) {
        int bytes = Math.max(1, bytesOf.applyAsInt(item));
        lock.lock();
        try {
            if (closed) {
                return false;
            }
            Project<T> p = projects.computeIfAbsent(project, Project::new);
            if (p.pending.size() >= maxPendingPerProject || pendingBytes + bytes > maxPendingBytes) {
                if (p.pending.isEmpty() && p.inFlight == 0) {
                    projects.remove(project);
                }
                return false;
            }
            p.pending.addLast(new Entry<>(item, System.nanoTime(), bytes));
            pendingBytes += bytes;
            schedule(p);
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Checks waiting now, all projects (for tests and metrics). */
    int pending() {
        lock.lock();
        try {
            return projects.values().stream().mapToInt(p -> p.pending.size()).sum();
        } finally {
            lock.unlock();
        }
    }

    /** Gives {@code p} a turn when it has work and may run another batch (lock held). */
    private void schedule(Project<T> p) {
        if (!p.inTurn && !p.pending.isEmpty() && p.inFlight < perProject) {
            p.inTurn = true;
            turns.addLast(p);
            work.signal();
        }
    }

    private void work() {
        while (true) {
            Project<T> p;
            List<T> batch = new ArrayList<>();
            List<T> expired = new ArrayList<>();
            lock.lock();
            try {
                while (turns.isEmpty() && !closed) {
                    work.awaitUninterruptibly();
                }
                if (closed) {
                    return;
                }
                p = turns.pollFirst();
                p.inTurn = false;
                long now = System.nanoTime();
                while (!p.pending.isEmpty() && batch.size() < maxBatch) {
                    Entry<T> e = p.pending.pollFirst();
                    pendingBytes -= e.bytes();
                    (now - e.enqueuedNanos() > maxWaitNanos ? expired : batch).add(e.item());
                }
                p.inFlight++;
                schedule(p); // another worker may take its next batch while this one runs
            } finally {
                lock.unlock();
            }
            List<T> left = List.of();
            try {
                left = handler.handle(p.id, batch, expired);
            } catch (RuntimeException e) {
                log.warn("[SubscriptionCheckDbFailed] a batch of checks of project {} failed: {}", p.id, e.toString());
            }
            lock.lock();
            try {
                p.inFlight--;
                for (int i = left.size() - 1; i >= 0; i--) {
                    T item = left.get(i);
                    int bytes = Math.max(1, bytesOf.applyAsInt(item));
                    p.pending.addFirst(new Entry<>(item, System.nanoTime(), bytes));
                    pendingBytes += bytes;
                }
                if (p.pending.isEmpty() && p.inFlight == 0) {
                    projects.remove(p.id);
                } else {
                    schedule(p);
                }
            } finally {
                lock.unlock();
            }
        }
    }

    @Override
    public void close() {
        lock.lock();
        try {
            closed = true;
            work.signalAll();
        } finally {
            lock.unlock();
        }
        for (Thread t : threads) {
            try {
                t.join(TimeUnit.SECONDS.toMillis(2));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
