package dev.aura.realtime.front.testing;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A well-behaved client's heartbeats, every 50 ms on its own socket: when each was answered, and
 * those left unanswered for {@link #ANSWER_WAIT}.
 */
public final class HeartbeatProbe {
    /** Only ends a wait whose answer never comes (counted in {@link #missed}). */
    public static final Duration ANSWER_WAIT = Duration.ofSeconds(10);

    private final long started = System.nanoTime();
    private final List<Long> answers = new CopyOnWriteArrayList<>();
    private final WsTestClient client;
    private final Thread thread;
    private volatile long stopped;
    private volatile boolean running = true;
    private volatile int missed;

    /** Starts heartbeating on {@code client}, which the probe closes when stopped. */
    public HeartbeatProbe(WsTestClient client) {
        this.client = client;
        this.thread = Thread.ofPlatform().daemon().name("probe").start(this::run);
    }

    private void run() {
        int ref = 0;
        while (running) {
            String r = Integer.toString(++ref);
            client.send("[null,\"" + r + "\",\"phoenix\",\"heartbeat\",{}]");
            try {
                while (true) {
                    WsTestClient.Received got = client.poll(ANSWER_WAIT);
                    if (got == null) {
                        missed++;
                        break;
                    }
                    if (got.text() != null && got.text().contains("\"" + r + "\",\"phoenix\"")) {
                        answers.add(System.nanoTime());
                        break;
                    }
                }
                Thread.sleep(50);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** When each heartbeat was answered ({@link System#nanoTime}), in order. */
    public List<Long> answers() {
        return answers;
    }

    public int count() {
        return answers.size();
    }

    public int missed() {
        return missed;
    }

    public long elapsedMs() {
        return (System.nanoTime() - started) / 1_000_000;
    }

    public void stop() throws InterruptedException {
        stopped = System.nanoTime();
        running = false;
        thread.join(5_000);
        client.close();
    }

    /** After {@link #stop}: the longest time from the start or an answer to the next answer or the stop (ms). */
    public long longestSilenceMs() {
        long longest = 0;
        long previous = started;
        for (long t : answers) {
            longest = Math.max(longest, t - previous);
            previous = t;
        }
        return Math.max(longest, stopped - previous) / 1_000_000;
    }
}
