package dev.aura.realtime.front;

import dev.aura.realtime.common.config.ConfigException;
import dev.aura.realtime.common.config.Env;
import dev.aura.realtime.front.config.FrontConfig;
import dev.aura.realtime.front.log.LogCode;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Entry point of {@code ws-front.jar}: reads the environment, starts a {@link FrontApp}, and
 * closes it on SIGTERM/SIGINT. An invalid configuration is one log line and exit status 2.
 */
public final class WsFrontMain {
    private static final Logger log = LoggerFactory.getLogger(WsFrontMain.class);

    private WsFrontMain() {}

    public static void main(String[] args) throws Exception {
        FrontConfig config;
        try {
            config = FrontConfig.load(Env.system());
        } catch (ConfigException e) {
            LogCode.ConfigInvalid.error(log, "invalid configuration: {}", e.getMessage());
            System.exit(2);
            return;
        }
        FrontApp app = FrontApp.start(config);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(Thread.ofPlatform().name("aura-shutdown").unstarted(() -> {
                    try {
                        app.close();
                    } finally {
                        stopped.countDown();
                    }
                }));
        stopped.await();
    }
}
