package dev.aura.realtime.front.channel;

import dev.aura.realtime.front.fanout.LocalTopics;
import dev.aura.realtime.front.log.LogCode;
import dev.aura.realtime.front.metrics.FrontMetrics;
import dev.aura.realtime.front.postgres.PostgresChanges;
import dev.aura.realtime.front.presence.PresenceExtension;
import dev.aura.realtime.front.protocol.PhoenixMessage;
import dev.aura.realtime.front.protocol.Replies;
import dev.aura.realtime.front.protocol.SystemMessages;
import dev.aura.realtime.front.resume.Resumes;
import dev.aura.realtime.front.session.ClientSession;
import java.time.Clock;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opening and closing the channels of one connection: the connection's table, the local index,
 * registry entries, the resume record, the token expiry timer, the presence seam, metrics. Event
 * loop only.
 */
final class ChannelLifecycle {
    private static final Logger log = LoggerFactory.getLogger(ChannelLifecycle.class);

    private final ClientSession session;
    private final ChannelTable table;
    private final LocalTopics topics;
    private final PostgresChanges postgres;
    private final Resumes resumes;
    private final PresenceExtension presence;
    private final FrontMetrics metrics;
    private final Clock clock;

    ChannelLifecycle(
            ClientSession session,
            ChannelTable table,
            LocalTopics topics,
            PostgresChanges postgres,
            Resumes resumes,
            PresenceExtension presence,
            FrontMetrics metrics,
            Clock clock) {
        this.session = session;
        this.table = table;
        this.topics = topics;
        this.postgres = postgres;
        this.resumes = resumes;
        this.presence = presence;
        this.metrics = metrics;
        this.clock = clock;
    }

    /** Makes a joined channel live (before its ok reply is sent). */
    void activate(Membership m) {
        table.add(m);
        topics.add(m);
        metrics.channelJoined();
        scheduleExpiry(m);
    }

    /** Closes the channel when its claims expire (re-armed when a later token extends them). */
    void scheduleExpiry(Membership m) {
        long delayMs = Math.max(0, m.claims().expiresAt().toEpochMilli() - clock.millis());
        m.expiry(session.eventLoop().schedule(() -> onExpiry(m), delayMs, TimeUnit.MILLISECONDS));
    }

    private void onExpiry(Membership m) {
        if (!m.active()) {
            return;
        }
        String expired = m.claims().expiredMessage(clock.instant());
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
        table.remove(m);
        topics.remove(m);
        boolean parking = park && m.resume().tracking();
        postgres.closeEntries(m, parking ? resumes.parkedUntil(m.projectId()) : 0);
        m.resume().close(parking);
        m.cancelExpiry();
        metrics.channelLeft();
        try {
            presence.onLeft(m);
        } catch (RuntimeException e) {
            LogCode.PresenceLeaveFailed.warn(log, "{}: {}", m.topic(), e.toString());
        }
        if (notify) {
            session.send(new PhoenixMessage.Push(m.joinRef(), m.joinRef(), m.topic(), "phx_close", Replies.empty()));
        }
    }

    /** Closes every channel of the connection without telling the client (it is gone). */
    void closeAll() {
        for (Membership m : table.joined()) {
            close(m, false, true); // the socket is gone: resumable channels are parked
        }
        table.clearJoining();
    }
}
