package dev.aura.realtime.front.testing;

import dev.aura.realtime.common.config.Env;
import dev.aura.realtime.front.config.FrontConfig;
import dev.aura.realtime.testkit.TestTokens;
import java.util.HashMap;
import java.util.Map;

/** What ws-front tests share: the JWT secret, a project, its tokens, and a replica's configuration. */
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
     * A replica on {@code natsUrl}: a free port, the test secret, a one second shutdown grace,
     * then {@code overrides}.
     */
    public static FrontConfig config(String natsUrl, String instance, Map<String, String> overrides) {
        Map<String, String> env = new HashMap<>(Map.of(
                "NATS_URL",
                natsUrl,
                "AURA_JWT_SECRET",
                SECRET,
                "WS_PORT",
                "0",
                "INSTANCE_ID",
                instance,
                "WS_IO_THREADS",
                "2",
                "WS_SHUTDOWN_GRACE_SECONDS",
                "1"));
        env.putAll(overrides);
        return FrontConfig.load(new Env(env));
    }
}
