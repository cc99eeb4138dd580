package dev.aura.realtime.front.testing;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * Makes Netty buffer leaks fail tests. Netty's {@link ResourceLeakDetector} (level PARANOID in
 * the surefire configuration) only logs {@code LEAK: ...} at ERROR when a leaked buffer has been
 * garbage collected and a later buffer is tracked; this class records those log events through a
 * logback appender on the detector's logger, and {@link #assertNoLeaks()} forces collection and
 * tracking before looking.
 */
public final class LeakWatch {
    private static final List<String> LEAKS = new ArrayList<>();
    private static boolean installed;

    private LeakWatch() {}

    /** Starts recording (idempotent). Call before the code under test allocates. */
    public static synchronized void install() {
        if (installed) {
            return;
        }
        Logger logger = (Logger) LoggerFactory.getLogger(ResourceLeakDetector.class);
        AppenderBase<ILoggingEvent> appender = new AppenderBase<>() {
            @Override
            protected void append(ILoggingEvent event) {
                if (event.getFormattedMessage().contains("LEAK")) {
                    synchronized (LeakWatch.class) {
                        LEAKS.add(event.getFormattedMessage());
                    }
                }
            }
        };
        appender.setName("leak-watch");
        appender.start();
        logger.addAppender(appender);
        installed = true;
    }

    /** Collects garbage, lets the detector report, and returns (and forgets) the leaks seen so far. */
    public static List<String> drain() {
        install();
        for (int round = 0; round < 5; round++) {
            System.gc();
            System.runFinalization();
            for (int i = 0; i < 200; i++) {
                // each tracked allocation polls the detector's reference queue
                ByteBuf a = PooledByteBufAllocator.DEFAULT.buffer(8);
                ByteBuf b = UnpooledByteBufAllocator.DEFAULT.buffer(8);
                a.release();
                b.release();
            }
        }
        synchronized (LeakWatch.class) {
            List<String> out = List.copyOf(LEAKS);
            LEAKS.clear();
            return out;
        }
    }

    /** Fails when Netty reported a leaked buffer since the last call. */
    public static void assertNoLeaks() {
        List<String> leaks = drain();
        if (!leaks.isEmpty()) {
            throw new AssertionError(leaks.size() + " Netty buffer leak(s):\n" + String.join("\n\n", leaks));
        }
    }
}
