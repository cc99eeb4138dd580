package dev.aura.realtime.front.channel;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.front.auth.Credentials;
import dev.aura.realtime.front.broadcast.Broadcasts;
import dev.aura.realtime.front.broadcast.PrivateChannels;
import dev.aura.realtime.front.fanout.Fanout;
import dev.aura.realtime.front.fanout.LocalTopics;
import dev.aura.realtime.front.metrics.FrontMetrics;
import dev.aura.realtime.front.postgres.PostgresChanges;
import dev.aura.realtime.front.presence.PresenceExtension;
import dev.aura.realtime.front.protocol.Framing;
import dev.aura.realtime.front.quota.ProjectQuotas;
import dev.aura.realtime.front.resume.Resumes;
import dev.aura.realtime.front.session.ClientSession;
import dev.aura.realtime.front.session.Limits;
import dev.aura.realtime.front.session.Sessions;
import io.netty.channel.Channel;
import java.time.Clock;

/**
 * The Phoenix channel layer of this replica: what every connection's channels share (the features
 * below the channel: postgres_changes, broadcast and private channels, presence through its
 * extension, resume; the project quotas; the token cache), and the factory of the parts of each
 * connection's channel layer. Built once by {@code FrontApp}; tests build it from fakes; each
 * connection's {@code ChannelRouter} is made on it.
 */
public final class ChannelLayer {
    final Credentials credentials;
    final ProjectQuotas quotas;
    final Limits limits;
    final Sessions sessions;
    final LocalTopics topics;
    final Fanout fanout;
    final PresenceExtension presence;
    final PostgresChanges postgres;
    final PrivateChannels privateChannels;
    final Broadcasts broadcasts;
    final PresencePushes presencePushes;
    final Resumes resumes;
    final FrontMetrics metrics;
    final Clock clock;

    /**
     * @param credentials verifies join and refresh tokens (JWTs and project API keys)
     * @param quotas per-project limits, counted across replicas
     * @param limits per-connection limits
     * @param sessions open connections
     * @param topics this replica's channel index
     * @param fanout each event loop's write path
     * @param presence the presence seam
     * @param mapper the wire JSON mapper (a track's size)
     */
    public ChannelLayer(
            Credentials credentials,
            ProjectQuotas quotas,
            Limits limits,
            Sessions sessions,
            LocalTopics topics,
            Fanout fanout,
            PresenceExtension presence,
            PostgresChanges postgres,
            PrivateChannels privateChannels,
            Broadcasts broadcasts,
            Resumes resumes,
            FrontMetrics metrics,
            ObjectMapper mapper,
            Clock clock) {
        this.credentials = credentials;
        this.quotas = quotas;
        this.limits = limits;
        this.sessions = sessions;
        this.topics = topics;
        this.fanout = fanout;
        this.presence = presence;
        this.postgres = postgres;
        this.privateChannels = privateChannels;
        this.broadcasts = broadcasts;
        this.resumes = resumes;
        this.metrics = metrics;
        this.clock = clock;
        this.presencePushes =
                new PresencePushes(presence, privateChannels, quotas, mapper, limits.maxPresencePayloadBytes(), clock);
    }

    ClientSession session(Channel channel, Framing framing, Claims apiKeyClaims) {
        return new ClientSession(channel, framing, apiKeyClaims, limits, metrics, fanout.outbox(channel.eventLoop()));
    }

    ChannelLifecycle lifecycle(ClientSession session, ChannelTable table) {
        return new ChannelLifecycle(session, table, topics, postgres, resumes, presence, metrics, clock);
    }

    JoinPipeline joins(ClientSession session, ChannelTable table, ChannelLifecycle lifecycle, InboundHold hold) {
        return new JoinPipeline(
                session,
                table,
                lifecycle,
                credentials,
                hold,
                quotas,
                postgres,
                privateChannels,
                broadcasts,
                resumes,
                presence,
                clock);
    }
}
