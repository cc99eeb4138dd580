package dev.aura.realtime.front;

import dev.aura.realtime.common.config.Env;
import dev.aura.realtime.front.config.FrontConfig;
import java.util.concurrent.CountDownLatch;

/** Entry point: reads the environment, starts a {@link FrontApp}, and closes it on SIGTERM/SIGINT. */
public final class WsFrontMain {
    private WsFrontMain() {}

    public static void main(String[] args) throws Exception {
        FrontConfig config = FrontConfig.load(Env.system());
        FrontApp app = FrontApp.start(config);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            try {
                                app.close();
                            } finally {
                                stopped.countDown();
                            }
                        },
                        "aura-shutdown"));
        stopped.await();
    }
}
