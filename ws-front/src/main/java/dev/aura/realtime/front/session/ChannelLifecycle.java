package dev.aura.realtime.front.session;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import dev.aura.realtime.front.fanout.PostgresBinding;
import dev.aura.realtime.front.log.LogCode;
import dev.aura.realtime.front.protocol.PhoenixMessage;
import dev.aura.realtime.front.protocol.Replies;
import dev.aura.realtime.front.protocol.SystemMessages;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opening and closing the channels of one connection: local index, registry entries, token
 * expiry timer, presence seam, metrics. Event loop only.
 */
final class ChannelLifecycle {
    private static final Logger log = LoggerFactory.getLogger(ChannelLifecycle.class);

    private final ChannelServices services;
    private final ClientSession session;

    ChannelLifecycle(ChannelServices services, ClientSession session) {
        this.services = services;
        this.session = session;
    }

    /** Makes a joined channel live (before its ok reply is sent). */
    void activate(Membership m) {
        session.memberships.put(m.topic(), m);
        services.topics().add(m);
        services.metrics().channelJoined();
        scheduleExpiry(m);
    }

    /** Puts (or re-puts with new claims) every registry entry of {@code m}. */
    CompletableFuture<Void> putEntries(Membership m) {
        List<CompletableFuture<Void>> puts = new ArrayList<>();
        for (PostgresBinding b : m.bindings()) {
            puts.add(services.registry().put(entry(m, b)));
        }
        return CompletableFuture.allOf(puts.toArray(CompletableFuture[]::new));
    }

    private SubscriptionEntry entry(Membership m, PostgresBinding b) {
        Claims c = m.claims();
        JsonNode claims;
        try {
            claims = services.mapper().readTree(c.json());
        } catch (JsonProcessingException e) {
            // the verifier parsed this very text: failing here is a bug, not a client error
            throw new IllegalStateException("claims of a verified token are not JSON", e);
        }
        return new SubscriptionEntry(
                b.subId(),
                m.projectId(),
                b.table(),
                b.event(),
                b.filter(),
                c.role(),
                claims,
                c.expiresAt().toEpochMilli(),
                services.instanceId(),
                b.select());
    }

    void scheduleExpiry(Membership m) {
        if (m.expiryTimer != null) {
            m.expiryTimer.cancel(false);
        }
        long delayMs = Math.max(
                0, m.claims().expiresAt().toEpochMilli() - services.clock().millis());
        m.expiryTimer = session.channel().eventLoop().schedule(() -> onExpiry(m), delayMs, TimeUnit.MILLISECONDS);
    }

    private void onExpiry(Membership m) {
        if (!m.active()) {
            return;
        }
        String expired = m.claims().expiredMessage(services.clock().instant());
        if (expired == null) { // refreshed meanwhile with a later token
            scheduleExpiry(m);
            return;
        }
        closeWithSystemError(m, SystemMessages.EXT_SYSTEM, expired);
    }

    /** Sends a {@code system} error, then closes the channel with {@code phx_close}. */
    void closeWithSystemError(Membership m, String extension, String message) {
        log.debug("closing {} on {}: {}", m.topic(), session, message);
        m.push("system", SystemMessages.error(extension, message, m.channelName()));
        close(m, true);
    }

    /**
     * Closes a channel: idempotent; removes registry entries and index entries.
     *
     * @param notify send {@code phx_close} (ref = join ref, as Phoenix does) to the client
     */
    void close(Membership m, boolean notify) {
        close(m, notify, false);
    }

    /**
     * @param park a resumable channel's socket closed (or it is joined again): its registry
     *     entries and resume record are parked for the project's window instead of deleted
     *     (docs/design.md R); an explicit leave deletes them
     */
    void close(Membership m, boolean notify, boolean park) {
        if (!m.active()) {
            return;
        }
        m.deactivate();
        if (session.memberships.get(m.topic()) == m) {
            session.memberships.remove(m.topic());
        }
        services.topics().remove(m);
        boolean parking = park && m.resume().tracking();
        long until = parking ? services.resumes().parkedUntil(m.projectId()) : 0;
        for (PostgresBinding b : m.bindings()) {
            String key = SubscriptionEntry.key(m.projectId(), b.subId());
            if (parking) {
                services.registry().park(key, until);
            } else {
                services.registry().remove(key);
            }
        }
        m.resume().close(parking);
        if (m.expiryTimer != null) {
            m.expiryTimer.cancel(false);
        }
        services.metrics().channelLeft();
        try {
            services.presence().onLeft(m);
        } catch (RuntimeException e) {
            LogCode.PresenceLeaveFailed.warn(log, "{}: {}", m.topic(), e.toString());
        }
        if (notify) {
            session.send(new PhoenixMessage.Push(m.joinRef(), m.joinRef(), m.topic(), "phx_close", Replies.empty()));
        }
    }

    /** Closes every channel of the connection without telling the client (it is gone). */
    void closeAll() {
        for (Membership m : List.copyOf(session.memberships.values())) {
            close(m, false, true); // the socket is gone: resumable channels are parked
        }
        session.pendingJoins.clear();
    }
}
