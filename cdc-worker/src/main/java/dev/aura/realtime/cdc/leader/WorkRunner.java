package dev.aura.realtime.cdc.leader;

import dev.aura.realtime.cdc.fence.FencedException;
import dev.aura.realtime.cdc.fence.LeaderGate;
import dev.aura.realtime.cdc.fence.LeaderWork;
import java.time.Duration;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the {@link LeaderWork} of one term at a time on its own thread, named
 * {@code aura-leader-work-<term>}.
 *
 * <p>While the term lasts, a work that throws or returns is logged and started again after the
 * restart backoff. {@link #stop(Duration)} interrupts the thread and waits for it; the caller
 * revokes the term's fence first, so even a work that ignores the interrupt can no longer pass
 * the fence. {@code start} and {@code stop} may be called from different threads.
 */
final class WorkRunner {
    private static final Logger log = LoggerFactory.getLogger(WorkRunner.class);

    private final LeaderWork work;
    private final Duration restartBackoff;
    private Thread current; // guarded by this
    private int terms; // guarded by this

    WorkRunner(LeaderWork work, Duration restartBackoff) {
        this.work = Objects.requireNonNull(work, "work");
        this.restartBackoff = Objects.requireNonNull(restartBackoff, "restartBackoff");
    }

    /** Starts the work of a new term on a new thread. */
    synchronized void start(LeaderGate gate) {
        if (current != null) {
            throw new IllegalStateException("leader work of the previous term is still running");
        }
        terms++;
        Thread thread = new Thread(new TermLoop(gate), "aura-leader-work-" + terms);
        thread.setDaemon(true);
        current = thread;
        thread.start();
    }

    /**
     * Interrupts the running work, if any, and waits up to {@code timeout} for its thread to end.
     * Idempotent.
     *
     * @return true when no work thread is left running
     */
    boolean stop(Duration timeout) {
        Thread thread;
        synchronized (this) {
            thread = current;
            current = null;
        }
        if (thread == null) {
            return true;
        }
        thread.interrupt();
        try {
            thread.join(timeout.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            log.error(
                    "[LeaderWorkStuck] leader work thread {} did not stop within {} ms of being interrupted; its fence is revoked",
                    thread.getName(),
                    timeout.toMillis());
            return false;
        }
        return true;
    }

    /** The body of a work thread: run, and after a failure restart after the backoff, until interrupted. */
    private final class TermLoop implements Runnable {
        private final LeaderGate gate;

        TermLoop(LeaderGate gate) {
            this.gate = gate;
        }

        @Override
        public void run() {
            Thread self = Thread.currentThread();
            log.info("leader work started (lease epoch {})", gate.leaseEpoch());
            while (!self.isInterrupted()) {
                try {
                    work.run(gate);
                    if (!self.isInterrupted()) {
                        log.warn(
                                "[LeaderWorkRestarted] leader work returned while still leading; restarting in {} ms",
                                restartBackoff.toMillis());
                    }
                } catch (InterruptedException e) {
                    self.interrupt();
                } catch (FencedException e) {
                    log.warn(
                            "[LeaderWorkRestarted] leader work fenced: {}; retrying in {} ms",
                            e.getMessage(),
                            restartBackoff.toMillis());
                } catch (Exception e) {
                    if (!self.isInterrupted()) {
                        log.error(
                                "[LeaderWorkRestarted] leader work failed; restarting in {} ms",
                                restartBackoff.toMillis(),
                                e);
                    }
                }
                if (!self.isInterrupted()) {
                    pause();
                }
            }
            log.info("leader work stopped");
        }

        private void pause() {
            try {
                Thread.sleep(restartBackoff);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
