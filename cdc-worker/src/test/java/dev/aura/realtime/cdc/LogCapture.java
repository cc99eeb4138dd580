package dev.aura.realtime.cdc;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import org.slf4j.LoggerFactory;

/** Records every log event of the JVM (logback root) while open; tests assert on what an operator would read. */
public final class LogCapture implements AutoCloseable {
    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();
    private final Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);

    public LogCapture() {
        appender.start();
        root.addAppender(appender);
    }

    /** Formatted messages at {@code level} or above containing {@code text}. */
    public List<String> lines(Level level, String text) {
        // ListAppender adds under AppenderBase.doAppend's lock (the appender itself), not the list's
        synchronized (appender) {
            return appender.list.stream()
                    .filter(e -> e.getLevel().isGreaterOrEqual(level))
                    .map(ILoggingEvent::getFormattedMessage)
                    .filter(m -> m.contains(text))
                    .toList();
        }
    }

    public long count(Level level, String text) {
        return lines(level, text).size();
    }

    @Override
    public void close() {
        root.detachAppender(appender);
        appender.stop();
    }
}
