package dev.aura.realtime.bench;

import dev.aura.realtime.testkit.Ports;
import dev.aura.realtime.testkit.ServiceEnv;
import dev.aura.realtime.testkit.ServiceHttp;
import dev.aura.realtime.testkit.ServiceProcess;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A process under test kept running (and so warm: JIT-compiled, pools open) across the rounds of a
 * figure, as a long-running service is. Between its turns it is paused with SIGSTOP, so it reads
 * nothing while a backlog is written or another reader is timed, and resumed with SIGCONT when its
 * turn comes; the time runs from the resume. Postgres is started with {@code wal_sender_timeout = 0}
 * by {@link #allowPauses} so a paused replication client is not disconnected.
 */
final class WarmProcess implements AutoCloseable {
    private static final Pattern HTTP_LISTENING = Pattern.compile("http api listening on port");

    final String label;
    /** Its {@code Aura-Origin}: the instance id its events carry ({@link ChangeCounter} counts by it). */
    final String origin;

    final ServiceProcess process;
    /** The worker's HTTP API (metrics, health); null for a process without one. */
    final ServiceHttp http;

    private boolean paused;

    WarmProcess(String label, String origin, ServiceProcess process, ServiceHttp http) {
        this.label = label;
        this.origin = origin;
        this.process = process;
        this.http = http;
    }

    /** Lets a replication client pause for longer than the walsender's default 60 s timeout. */
    static void allowPauses(Stack s) {
        s.pg.execute("ALTER SYSTEM SET wal_sender_timeout = 0", "SELECT pg_reload_conf()");
    }

    /**
     * Starts a cdc-worker of its own ({@code name} in the logs) reading {@code slot} (created by the
     * worker when missing), beside the one {@link Stack} manages; its instance id ({@code Aura-Origin})
     * is {@code name}. Retries a port taken by another
     * process, as {@link Stack#startWorker} does.
     */
    static WarmProcess worker(Stack s, String name, String slot, Map<String, String> overrides, List<String> jvmArgs) {
        for (int attempt = 1; ; attempt++) {
            ServiceHttp http = new ServiceHttp(Ports.forService());
            Map<String, String> env = ServiceEnv.cdcWorker(s.pg, s.nats, Stack.SECRET, slot, http.port());
            env.put("CDC_TABLE_REFRESH_MS", "500");
            env.put("INSTANCE_ID", name);
            env.putAll(overrides);
            ServiceProcess p = ServiceProcess.startJar(name, Stack.cdcJar(), env, jvmArgs);
            try {
                p.waitForLog(HTTP_LISTENING, Duration.ofSeconds(60));
                return new WarmProcess(name, name, p, http);
            } catch (AssertionError e) {
                p.stop();
                if (attempt >= 3 || !p.logTail(40).contains("Address already in use")) {
                    throw e;
                }
            }
        }
    }

    void awaitActive() {
        http.awaitHealth("\"cdc_active\":true", Duration.ofSeconds(90), process);
    }

    /** One meter of the worker's /metrics, 0 when absent (or without an HTTP API). */
    double metric(String name) {
        return http == null ? 0 : http.metric(name);
    }

    long pid() {
        return process.pid();
    }

    void pause() {
        if (!paused) {
            Procs.run(List.of("kill", "-STOP", Long.toString(process.pid())));
            paused = true;
        }
    }

    void resume() {
        if (paused) {
            Procs.run(List.of("kill", "-CONT", Long.toString(process.pid())));
            paused = false;
        }
    }

    /** Resumes (a stopped process would not see SIGTERM) and stops the process. */
    @Override
    public void close() {
        if (process.isAlive()) {
            resume();
            process.stop();
        }
    }
}
