package dev.aura.realtime.cdc;

import dev.aura.realtime.cdc.config.CdcConfig;
import dev.aura.realtime.common.config.ConfigException;
import dev.aura.realtime.common.config.Env;
import java.time.Clock;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Entry point of {@code cdc-worker.jar}: configuration from the environment, then {@link CdcWorker}. */
public final class CdcWorkerMain {
    private static final Logger log = LoggerFactory.getLogger(CdcWorkerMain.class);

    private CdcWorkerMain() {}

    public static void main(String[] args) throws Exception {
        CdcConfig config;
        try {
            config = CdcConfig.fromEnv(Env.system());
        } catch (ConfigException e) {
            log.error("[ConfigInvalid] invalid configuration: {}", e.getMessage());
            System.exit(2);
            return;
        }
        CdcWorker worker = new CdcWorker(config, Clock.systemUTC());
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(Thread.ofPlatform().name("aura-shutdown").unstarted(() -> {
                    log.info("shutting down");
                    worker.close();
                    stopped.countDown();
                }));
        worker.start();
        stopped.await();
    }
}
