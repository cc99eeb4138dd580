package dev.aura.realtime.front.session;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.front.fanout.CdcHealth;
import dev.aura.realtime.front.fanout.Fanout;
import dev.aura.realtime.front.fanout.LocalTopics;
import dev.aura.realtime.front.metrics.FrontMetrics;
import dev.aura.realtime.front.presence.PresenceExtension;
import dev.aura.realtime.front.quota.ProjectQuotas;
import dev.aura.realtime.front.relay.BroadcastPublisher;
import dev.aura.realtime.front.relay.ChannelAccessClient;
import dev.aura.realtime.front.relay.SubscriptionChecker;
import dev.aura.realtime.front.relay.SubscriptionRegistry;
import dev.aura.realtime.front.resume.Resumes;
import java.time.Clock;

/**
 * Everything the channel layer talks to, passed to each connection's {@link SessionHandler}.
 * The relay and presence members are interfaces, so tests run the protocol in memory with fakes.
 *
 * @param verifier verifies join and refresh tokens
 * @param checker asks a cdc-worker whether a postgres_changes binding is valid
 * @param registry the subscription registry (JetStream KV)
 * @param publisher publishes broadcasts to the other replicas
 * @param topics local channel index
 * @param fanout local delivery of broadcasts and changes
 * @param cdc whether changes reach this replica (CDC status, silence, the NATS link)
 * @param presence the presence seam
 * @param sessions open connections
 * @param limits per-connection limits
 * @param quotas per-project limits, counted across replicas
 * @param metrics meters
 * @param instanceId this replica's id (registry entries' {@code instance})
 * @param clock wall clock (token expiry, rate windows)
 * @param mapper wire JSON mapper
 * @param access asks a cdc-worker about private channels (checks, replay, persist)
 * @param privateOnly each project's {@code private_only}, cached
 * @param resumes postgres_changes resume (docs/design.md R), {@link Resumes#off()} in tests
 */
public record ChannelServices(
        VerifiedTokens tokens,
        SubscriptionChecker checker,
        SubscriptionRegistry registry,
        BroadcastPublisher publisher,
        LocalTopics topics,
        Fanout fanout,
        CdcHealth cdc,
        PresenceExtension presence,
        Sessions sessions,
        Limits limits,
        ProjectQuotas quotas,
        FrontMetrics metrics,
        String instanceId,
        Clock clock,
        ObjectMapper mapper,
        ChannelAccessClient access,
        PrivateOnlyCache privateOnly,
        Resumes resumes) {

    /** Without resume (tests). */
    public ChannelServices(
            VerifiedTokens tokens,
            SubscriptionChecker checker,
            SubscriptionRegistry registry,
            BroadcastPublisher publisher,
            LocalTopics topics,
            Fanout fanout,
            CdcHealth cdc,
            PresenceExtension presence,
            Sessions sessions,
            Limits limits,
            ProjectQuotas quotas,
            FrontMetrics metrics,
            String instanceId,
            Clock clock,
            ObjectMapper mapper,
            ChannelAccessClient access,
            PrivateOnlyCache privateOnly) {
        this(
                tokens,
                checker,
                registry,
                publisher,
                topics,
                fanout,
                cdc,
                presence,
                sessions,
                limits,
                quotas,
                metrics,
                instanceId,
                clock,
                mapper,
                access,
                privateOnly,
                Resumes.off());
    }
}
