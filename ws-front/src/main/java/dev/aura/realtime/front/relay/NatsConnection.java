package dev.aura.realtime.front.relay;

import dev.aura.realtime.front.log.LogCode;
import io.nats.client.Connection;
import io.nats.client.ConnectionListener;
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
 * The replica's one NATS connection. jnats reconnects by itself forever (its own threads);
 * {@link #onReconnect} hooks run on jnats' connection-listener thread after every reconnect, so
 * the registry can re-put its entries (the KV bucket is memory storage and may have been lost).
 */
public final class NatsConnection implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(NatsConnection.class);

    private final Connection connection;
    private final List<Runnable> reconnectHooks = new CopyOnWriteArrayList<>();
    private final AtomicBoolean closed = new AtomicBoolean();

    private NatsConnection(String url, String name) throws IOException, InterruptedException {
        Options options = new Options.Builder()
                .servers(url.split(","))
                .connectionName(name)
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
                })
                .build();
        this.connection = Nats.connect(options);
    }

    /**
     * Connects (blocking up to the connection timeout).
     *
     * @param url comma-separated NATS URLs
     * @param name connection name shown by the server (the instance id)
     */
    public static NatsConnection connect(String url, String name) throws IOException, InterruptedException {
        return new NatsConnection(url, name);
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

    private void onEvent(Connection conn, ConnectionListener.Events event) {
        log.info("NATS {}", event.getEvent());
        if (event == ConnectionListener.Events.RECONNECTED) {
            for (Runnable hook : reconnectHooks) {
                try {
                    hook.run();
                } catch (RuntimeException e) {
                    LogCode.ReconnectHookFailed.warn(log, "{}", e.toString());
                }
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
