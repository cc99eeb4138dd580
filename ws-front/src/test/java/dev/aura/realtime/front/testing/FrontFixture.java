package dev.aura.realtime.front.testing;

import dev.aura.realtime.common.config.Env;
import dev.aura.realtime.front.config.FrontConfig;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.ServiceEnv;
import dev.aura.realtime.testkit.TestTokens;
import java.util.Map;

/**
 * What ws-front tests share: the JWT secret, a project, its tokens, a replica's configuration and
 * its WebSocket URL.
 */
public final class FrontFixture {
    public static final String SECRET = "test-secret-test-secret-test-secret-0123456789";
    public static final String PROJECT = "6f1c2a52-7c1e-4a59-9d1d-3f0d7c0a1b2c";
    /** Tokens valid for an hour on the system clock. */
    public static final TestTokens TOKENS = TestTokens.of(SECRET);

    private FrontFixture() {}

    /** An anon API key of {@link #PROJECT}, valid for an hour. */
    public static String anonKey() {
        return TOKENS.anon(PROJECT);
    }

    /**
     * A replica on {@code nats}: the testkit's ws-front environment with the test secret and a
     * free port, then instance id {@code instance}, two event loop threads and a one second
     * shutdown grace, then {@code overrides}.
     */
    public static FrontConfig config(NatsServer nats, String instance, Map<String, String> overrides) {
        Map<String, String> env = ServiceEnv.wsFront(nats, SECRET, 0);
        env.put("INSTANCE_ID", instance);
        env.put("WS_IO_THREADS", "2");
        env.put("WS_SHUTDOWN_GRACE_SECONDS", "1");
        env.putAll(overrides);
        return FrontConfig.load(new Env(env));
    }

    /**
     * The WebSocket URL of the replica on {@code port} for a vsn 2.0.0 client with
     * {@link #anonKey()}.
     */
    public static String wsUrl(int port) {
        return "ws://127.0.0.1:" + port + "/realtime/v1/websocket?apikey=" + anonKey() + "&vsn=2.0.0";
    }
}
