package dev.aura.realtime.front.relay;

import dev.aura.realtime.common.config.NatsSettings;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.front.log.LogCode;
import io.nats.client.Connection;
import io.nats.client.ConnectionListener;
import io.nats.client.Consumer;
import io.nats.client.ErrorListener;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The replica's one NATS connection, authenticated and encrypted as {@link NatsSettings} says,
 * with this binary's reply prefix ({@link Subjects#WS_FRONT_INBOX}, the only one its NATS
 * permissions let it read). jnats reconnects by itself forever (its own threads);
 * {@link #onDisconnect} hooks run on jnats' connection-listener thread when the link drops and
 * {@link #onReconnect} hooks after every reconnect, so the fan-out can tell clients and the
 * registry can re-put its entries (the KV bucket is memory storage and may have been lost).
 *
 * <p>A link that dies without a reset (a silent partition) is noticed by pings:
 * {@link #PING_INTERVAL} apart, {@link #MAX_PINGS_OUT} unanswered make jnats reconnect, so a dead
 * link is detected within about ten seconds instead of jnats' default of minutes.
 */
public final class NatsConnection implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(NatsConnection.class);

    /** Interval of the client's pings. */
    static final Duration PING_INTERVAL = Duration.ofSeconds(3);
    /** Unanswered pings after which the link counts as dead. */
    static final int MAX_PINGS_OUT = 2;

    private final Connection connection;
    private final List<Runnable> reconnectHooks = new CopyOnWriteArrayList<>();
    private final List<Runnable> disconnectHooks = new CopyOnWriteArrayList<>();
    private final AtomicBoolean closed = new AtomicBoolean();

    private NatsConnection(NatsSettings settings, String name) throws IOException, InterruptedException {
        Options options = settings.builder(Subjects.WS_FRONT_INBOX)
                .connectionName(name)
                .pingInterval(PING_INTERVAL)
                .maxPingsOut(MAX_PINGS_OUT)
                .maxReconnects(-1)
                .reconnectWait(Duration.ofMillis(500))
                .connectionTimeout(Duration.ofSeconds(5))
                // a request nobody serves (no cdc-worker) fails at once instead of timing out
                .reportNoResponders()
                .connectionListener(this::onEvent)
                .errorListener(new ErrorListener() {
                    @Override
                    public void errorOccurred(Connection conn, String error) {
                        LogCode.NatsError.warn(log, "{}", error);
                    }

                    @Override
                    public void exceptionOccurred(Connection conn, Exception exp) {
                        LogCode.NatsException.warn(log, "{}", exp.toString());
                    }

                    @Override
                    public void slowConsumerDetected(Connection conn, Consumer consumer) {
                        // jnats' default is silent: messages dropped here are messages clients miss
                        LogCode.NatsSlowConsumer.warn(
                                log,
                                "{} messages dropped so far ({} pending, limit {} messages / {} bytes)",
                                consumer.getDroppedCount(),
                                consumer.getPendingMessageCount(),
                                consumer.getPendingMessageLimit(),
                                consumer.getPendingByteLimit());
                    }
                })
                .build();
        this.connection = Nats.connect(options);
    }

    /**
     * Connects (blocking up to the connection timeout).
     *
     * @param settings servers, credentials and TLS
     * @param name connection name shown by the server (the instance id)
     */
    public static NatsConnection connect(NatsSettings settings, String name) throws IOException, InterruptedException {
        return new NatsConnection(settings, name);
    }

    public Connection connection() {
        return connection;
    }

    public boolean isConnected() {
        return connection.getStatus() == Connection.Status.CONNECTED;
    }

    /** Runs {@code hook} after every reconnect. */
    public void onReconnect(Runnable hook) {
        reconnectHooks.add(hook);
    }

    /** Runs {@code hook} whenever the link drops (not at {@link #close()}). */
    public void onDisconnect(Runnable hook) {
        disconnectHooks.add(hook);
    }

    private void onEvent(Connection conn, ConnectionListener.Events event) {
        log.info("NATS {}", event.getEvent());
        if (event == ConnectionListener.Events.RECONNECTED) {
            run(reconnectHooks);
        } else if (event == ConnectionListener.Events.DISCONNECTED && !closed.get()) {
            run(disconnectHooks);
        }
    }

    private static void run(List<Runnable> hooks) {
        for (Runnable hook : hooks) {
            try {
                hook.run();
            } catch (RuntimeException e) {
                LogCode.ReconnectHookFailed.warn(log, "{}", e.toString());
            }
        }
    }

    /** Flushes and closes; idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            connection.flush(Duration.ofSeconds(2));
        } catch (Exception e) {
            log.debug("flush before close failed: {}", e.toString());
        }
        try {
            connection.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
