package dev.aura.realtime.cdc;

import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * The set-up of tests that start their own worker in each test and assert on its logs: a fresh
 * {@link CdcFixture} per test on {@link #postgres()} and the shared NATS (no worker started yet),
 * with the JVM's logs captured from before the fixture opens until after it closed (worker
 * stopped, slot dropped).
 *
 * <p>JUnit runs this class's {@code @BeforeEach} before a subclass's and its {@code @AfterEach}
 * after a subclass's: a subclass's own set-up sees {@link #fx} open, and its own tear-down runs
 * while the worker may still be running.
 */
public abstract class CdcFixtureAndLogs {
    protected CdcFixture fx;
    protected LogCapture logs;

    /** The server of each test's fixture; the shared one unless a subclass needs its own. */
    protected PostgresServer postgres() {
        return PostgresServer.shared();
    }

    @BeforeEach
    protected final void openFixtureAndLogs() throws Exception {
        logs = new LogCapture();
        fx = new CdcFixture(postgres(), NatsServer.shared());
    }

    @AfterEach
    protected final void closeFixtureAndLogs() throws Exception {
        try {
            if (fx != null) {
                fx.close();
            }
        } finally {
            logs.close();
        }
    }
}
