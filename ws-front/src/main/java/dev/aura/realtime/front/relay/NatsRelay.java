package dev.aura.realtime.front.relay;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.wire.AuraHeaders;
import dev.aura.realtime.common.wire.CdcStatus;
import dev.aura.realtime.common.wire.ChangeEvent;
import dev.aura.realtime.common.wire.ChannelAccess;
import dev.aura.realtime.common.wire.DbBroadcast;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.SubscriptionCheck;
import dev.aura.realtime.front.log.LogCode;
import dev.aura.realtime.front.metrics.FrontMetrics;
import dev.aura.realtime.front.protocol.UserBroadcast;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.Message;
import io.nats.client.impl.Headers;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * ws-front's side of NATS: subscribes the changes ({@code aura.realtime.changes.>}), broadcast
 * ({@code aura.realtime.broadcast.>}) and CDC status subjects and hands broadcasts, change events
 * and CDC status to a {@link RelayListener}; publishes this replica's broadcasts; asks
 * cdc-workers to validate bindings.
 *
 * <p>Threads: one jnats dispatcher thread calls the listener in subject order. Messages whose
 * {@code Aura-Origin} is this instance are dropped (our own broadcast echoes), and so are change
 * events already relayed with the same subject and {@code Aura-Event-Id} (a re-published batch,
 * {@link EventIdWindow}), before they are decoded. Undecodable
 * messages ({@link LogCode#RelayDecodeFailed}) and messages the listener failed to deliver
 * ({@link LogCode#RelayDeliveryFailed}) are logged with their code, counted and skipped.
 */
public final class NatsRelay implements BroadcastPublisher, SubscriptionChecker, ChannelAccessClient, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(NatsRelay.class);

    private static final String CHANGES_PREFIX = Subjects.CHANGES + ".";
    private static final String MESSAGES_PREFIX = Subjects.MESSAGES + ".";

    private final Connection connection;
    private final String instanceId;
    private final Duration checkTimeout;
    private final ObjectMapper mapper;
    private final FrontMetrics metrics;
    private final EventIdWindow seen;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Map<SubscriptionCheck.Request, CompletableFuture<Outcome>> checksInFlight = new ConcurrentHashMap<>();
    private RelayListener listener;
    private Dispatcher dispatcher;

    public NatsRelay(
            Connection connection,
            String instanceId,
            Duration checkTimeout,
            ObjectMapper mapper,
            FrontMetrics metrics,
            int dedupeWindowEvents,
            long dedupeWindowBytes) {
        this.connection = connection;
        this.instanceId = instanceId;
        this.checkTimeout = checkTimeout;
        this.mapper = mapper;
        this.metrics = metrics;
        this.seen = new EventIdWindow(dedupeWindowEvents, dedupeWindowBytes);
    }

    /**
     * Subscribes the changes, broadcast and CDC status subjects and starts delivering to
     * {@code target}. Call once. Deliberately not {@code aura.realtime.>}: that would also match
     * {@link Subjects#SUBSCRIPTION_CHECK}, making every ws-front a silent "responder" to the
     * cdc-workers' RPC, so a missing cdc-worker would look like a timeout instead of failing
     * at once with no responders.
     */
    public void start(RelayListener target) {
        this.listener = target;
        this.dispatcher = connection.createDispatcher(this::onMessage);
        dispatcher.subscribe(Subjects.CHANGES + ".>");
        dispatcher.subscribe(Subjects.BROADCAST + ".>");
        dispatcher.subscribe(Subjects.MESSAGES + ".>");
        dispatcher.subscribe(Subjects.CDC_STATUS);
    }

    private void onMessage(Message msg) {
        String origin = msg.hasHeaders() ? msg.getHeaders().getFirst(AuraHeaders.ORIGIN) : null;
        if (instanceId.equals(origin)) {
            return;
        }
        String subject = msg.getSubject();
        if ((subject.startsWith(CHANGES_PREFIX) || subject.startsWith(MESSAGES_PREFIX)) && isDuplicate(subject, msg)) {
            metrics.relayDuplicate();
            return;
        }
        Runnable delivery;
        try {
            delivery = decode(subject, msg);
        } catch (Exception e) {
            metrics.relayError();
            LogCode.RelayDecodeFailed.warn(log, "subject {}: {}", subject, e.toString());
            return;
        }
        if (delivery == null) {
            return;
        }
        try {
            delivery.run();
        } catch (RuntimeException e) {
            metrics.relayError();
            LogCode.RelayDeliveryFailed.warn(log, "subject {}: {}", subject, e.toString(), e);
        }
    }

    private boolean isDuplicate(String subject, Message msg) {
        String id = msg.hasHeaders() ? msg.getHeaders().getFirst(AuraHeaders.EVENT_ID) : null;
        return id != null && !seen.firstSighting(subject, id);
    }

    /**
     * Counts and decodes one message.
     *
     * @return the listener call delivering it, or null for a subject not ours to handle
     */
    private Runnable decode(String subject, Message msg) throws Exception {
        if (subject.equals(Subjects.CDC_STATUS)) {
            metrics.relayInStatus();
            CdcStatus status = mapper.readValue(msg.getData(), CdcStatus.class);
            return () -> listener.onCdcStatus(status);
        }
        Subjects.Parsed parsed = Subjects.parse(subject);
        if (parsed == null) {
            return null;
        }
        if (parsed.kind().equals("broadcast")) {
            metrics.relayInBroadcast();
            String id = msg.hasHeaders() ? msg.getHeaders().getFirst(AuraHeaders.EVENT_ID) : null;
            UserBroadcast message = BroadcastWire.decode(msg.getData(), id);
            return () -> listener.onBroadcast(parsed.projectId(), parsed.name(), message);
        }
        if (parsed.kind().equals("messages")) {
            metrics.relayInBroadcast();
            DbBroadcast message = mapper.readValue(msg.getData(), DbBroadcast.class);
            return () -> listener.onDbBroadcast(parsed.projectId(), message);
        }
        metrics.relayInChange();
        ChangeEvent event = mapper.readValue(msg.getData(), ChangeEvent.class);
        return () -> listener.onChange(event);
    }

    @Override
    public void publish(String projectId, String channel, UserBroadcast message) {
        Headers headers = new Headers().add(AuraHeaders.ORIGIN, instanceId);
        if (message.id() != null) {
            headers.add(AuraHeaders.EVENT_ID, message.id());
        }
        try {
            connection.publish(Subjects.broadcast(projectId, channel), headers, BroadcastWire.encode(message));
            metrics.relayOutBroadcast();
        } catch (RuntimeException e) {
            metrics.relayError();
            LogCode.BroadcastPublishFailed.warn(log, "{}: {}", channel, e.toString());
        }
    }

    /**
     * Identical checks share one request while it is in flight (bounded by the joins in flight):
     * a reconnect storm of thousands of clients on one channel asks once, not once per client,
     * and the same question has the same answer.
     */
    @Override
    public CompletableFuture<Outcome> check(SubscriptionCheck.Request request) {
        CompletableFuture<Outcome> mine = new CompletableFuture<>();
        CompletableFuture<Outcome> shared = checksInFlight.putIfAbsent(request, mine);
        if (shared != null) {
            metrics.checkShared();
            return shared.thenApply(o -> o); // a copy: a caller cannot complete the shared one
        }
        requestCheck(request).whenComplete((outcome, err) -> {
            checksInFlight.remove(request, mine);
            if (err != null) {
                mine.complete(new Outcome.Unavailable(err.toString()));
            } else {
                mine.complete(outcome);
            }
        });
        return mine.thenApply(o -> o);
    }

    private CompletableFuture<Outcome> requestCheck(SubscriptionCheck.Request request) {
        byte[] body;
        try {
            body = mapper.writeValueAsBytes(request);
        } catch (Exception e) {
            return CompletableFuture.completedFuture(new Outcome.Unavailable(e.toString()));
        }
        CompletableFuture<Message> reply;
        try {
            reply = connection.requestWithTimeout(Subjects.SUBSCRIPTION_CHECK, body, checkTimeout);
        } catch (RuntimeException e) {
            return CompletableFuture.completedFuture(new Outcome.Unavailable(e.toString()));
        }
        // jnats checks request timeouts on a coarse cleanup timer; enforce ours precisely
        return reply.orTimeout(checkTimeout.toMillis(), TimeUnit.MILLISECONDS).handle((msg, err) -> {
            if (err != null) {
                return new Outcome.Unavailable(err.toString());
            }
            if (msg.isStatusMessage()) {
                return new Outcome.Unavailable("status " + msg.getStatus().getCode());
            }
            try {
                SubscriptionCheck.Reply r = mapper.readValue(msg.getData(), SubscriptionCheck.Reply.class);
                return r.ok() ? new Outcome.Valid(r.columnType(), r.notice()) : new Outcome.Invalid(r.error());
            } catch (Exception e) {
                return new Outcome.Unavailable("undecodable reply: " + e);
            }
        });
    }

    @Override
    public CompletableFuture<ChannelAccess.Reply> ask(ChannelAccess.Request request) {
        byte[] body;
        CompletableFuture<Message> reply;
        try {
            body = mapper.writeValueAsBytes(request);
            reply = connection.requestWithTimeout(Subjects.CHANNEL_ACCESS, body, checkTimeout);
        } catch (Exception e) {
            log.debug("channel access request failed: {}", e.toString());
            return CompletableFuture.completedFuture(ChannelAccess.Reply.failed(UNAVAILABLE));
        }
        return reply.orTimeout(checkTimeout.toMillis(), TimeUnit.MILLISECONDS).handle((msg, err) -> {
            if (err != null || msg.isStatusMessage()) {
                log.debug("channel access request unanswered: {}", err == null ? msg.getStatus() : err.toString());
                return ChannelAccess.Reply.failed(UNAVAILABLE);
            }
            try {
                return mapper.readValue(msg.getData(), ChannelAccess.Reply.class);
            } catch (Exception e) {
                return ChannelAccess.Reply.failed(UNAVAILABLE);
            }
        });
    }

    /** Unsubscribes; idempotent. Does not close the connection (owned by {@link NatsConnection}). */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true) && dispatcher != null) {
            try {
                connection.closeDispatcher(dispatcher);
            } catch (RuntimeException e) {
                log.debug("closing dispatcher: {}", e.toString());
            }
        }
    }
}
