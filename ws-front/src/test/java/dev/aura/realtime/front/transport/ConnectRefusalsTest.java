package dev.aura.realtime.front.transport;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.aura.realtime.front.metrics.FrontMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class ConnectRefusalsTest {
    @Test
    void everyRefusalIsCountedByItsReasonAndLoggedAtMostOncePerReasonAndSecond() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        AtomicLong nanos = new AtomicLong();
        ConnectRefusals refusals = new ConnectRefusals(new FrontMetrics(registry), nanos::get);
        EmbeddedChannel channel = new EmbeddedChannel();
        ListAppender<ILoggingEvent> log = new ListAppender<>();
        log.start();
        Logger logger = (Logger) LoggerFactory.getLogger(ConnectRefusals.class);
        logger.addAppender(log);
        try {
            // 1000 refusals over 1 s (one per millisecond), then one more after the second
            for (int i = 0; i < 1000; i++) {
                refusals.refused(channel, "InvalidJWTToken", "InvalidJWTToken: Token has expired 3 seconds ago", "/x");
                nanos.addAndGet(1_000_000);
            }
            refusals.refused(channel, "InvalidJWTToken", "InvalidJWTToken: Token has expired 4 seconds ago", "/x");
            refusals.refused(channel, ConnectRefusals.API_KEY_MISSING, "API key is missing", "/x");
        } finally {
            logger.detachAppender(log);
        }

        assertThat(log.list)
                .extracting(ILoggingEvent::getFormattedMessage)
                .containsExactly(
                        "[ConnectionRefused] InvalidJWTToken: Token has expired 3 seconds ago (remote embedded, /x)",
                        "[ConnectionRefused] InvalidJWTToken: Token has expired 4 seconds ago (remote embedded, /x);"
                                + " 999 more InvalidJWTToken refusals since the last such line",
                        "[ConnectionRefused] ApiKeyMissing: API key is missing (remote embedded, /x)");
        assertThat(log.list).extracting(ILoggingEvent::getLevel).containsOnly(Level.INFO);

        assertThat(registry.get("aura.ws.connections.refused")
                        .tag("reason", "InvalidJWTToken")
                        .counter()
                        .count())
                .isEqualTo(1001);
        assertThat(registry.get("aura.ws.connections.refused")
                        .tag("reason", ConnectRefusals.API_KEY_MISSING)
                        .counter()
                        .count())
                .isEqualTo(1);
    }
}
