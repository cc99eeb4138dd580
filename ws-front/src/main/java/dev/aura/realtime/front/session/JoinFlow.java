package dev.aura.realtime.front.session;

import dev.aura.realtime.common.auth.AuthException;
import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.front.protocol.JoinConfig;
import dev.aura.realtime.front.protocol.PhoenixMessage;
import dev.aura.realtime.front.protocol.Reasons;
import dev.aura.realtime.front.protocol.Replies;
import dev.aura.realtime.front.protocol.Topics;
import dev.aura.realtime.front.quota.ProjectQuotas;

/**
 * {@code phx_join} of one connection (event loop only).
 *
 * <p>Order of a join with postgres_changes: validate topic, rate and channel limits, token and
 * payload, and that the token (the join's {@code access_token}, else the connect-time apikey) has
 * not expired; ask a cdc-worker about every binding (asynchronously; a later join or leave of the
 * same topic supersedes the pending one); on any refusal reply the first refusal's reason; else
 * make the channel live, put the registry entries and, once they are written, reply ok with the
 * bindings echoed in client order and push {@code system} "Subscribed to PostgreSQL" (or the
 * CDC-unavailable error). A second join of a joined topic first closes the old channel with
 * {@code phx_close} carrying the old join ref, as Phoenix does. History is replayed right after
 * the ok reply: {@code config.broadcast.replay}, or the SSE endpoint's {@code Last-Event-ID}.
 *
 * <p>A join costs the project one join and the subscription checks it causes (its distinct
 * bindings, plus a private channel's read check), both counted across replicas
 * ({@link ProjectQuotas#admitJoin}); identical bindings are checked and registered once.
 *
 * <p>Every join also passes its gate ({@link PrivateChannels#gate}), asked together with the
 * binding checks: a private channel's read check (refused with Supabase's "Unauthorized: You do not
 * have permissions to read from this Channel topic"), or the project's {@code private_only} for a
 * public one. A private channel's replay comes from the project's messages table (docs/design.md H1, H2).
 *
 * <p>This class validates the join and replies its refusals; the rest of a join's steps are the
 * methods of its {@link PendingJoin}.
 */
final class JoinFlow {
    static final int PREFIX_LENGTH = Topics.PREFIX.length();

    final ChannelServices services;
    final ClientSession session;
    final ChannelLifecycle lifecycle;
    final PrivateChannels privateChannels;

    JoinFlow(
            ChannelServices services,
            ClientSession session,
            ChannelLifecycle lifecycle,
            PrivateChannels privateChannels) {
        this.services = services;
        this.session = session;
        this.lifecycle = lifecycle;
        this.privateChannels = privateChannels;
    }

    void join(PhoenixMessage.Join j) {
        String topic = j.topic();
        if (!topic.startsWith(Topics.PREFIX)) {
            replyError(j, Reasons.UNMATCHED_TOPIC);
            return;
        }
        if (!Topics.isChannel(topic)) {
            replyError(j, Reasons.TOPIC_NAME_REQUIRED);
            return;
        }
        if (Topics.nameTooLong(topic)) {
            replyError(j, Reasons.TOPIC_TOO_LONG);
            return;
        }
        if (topic.indexOf('\u0000') >= 0) {
            replyError(j, Reasons.TOPIC_NAME_INVALID); // NUL is reserved for private channel keys
            return;
        }
        if (!session.joins.tryAcquire(services.clock().millis())) {
            replyError(j, Reasons.TOO_MANY_JOINS);
            return;
        }
        // typed by the codec: what the join costs; a payload refusal is still replied in its place below
        JoinConfig request = j.config();
        String projectId = session.apiKeyClaims().projectId();
        String overQuota = services.quotas().admitJoin(projectId, request == null ? 0 : request.checks());
        if (overQuota != null) {
            replyError(j, overQuota);
            return;
        }
        Membership previous = session.memberships.get(topic);
        if (previous != null) {
            lifecycle.close(previous, true, true); // parked: the new join may resume it
        }
        session.pendingJoins.remove(topic);
        if (session.memberships.size() + session.pendingJoins.size()
                >= services.quotas().quota(projectId).maxChannelsPerClient()) {
            replyError(j, Reasons.TOO_MANY_CHANNELS);
            return;
        }
        if (j.refusal() != null) {
            replyError(j, j.refusal());
            return;
        }
        Claims claims = session.apiKeyClaims();
        if (request.accessToken() != null) {
            try {
                claims = services.tokens().verify(request.accessToken()); // shared, see VerifiedTokens
            } catch (AuthException e) {
                replyError(j, e.reason());
                return;
            }
            if (!claims.projectId().equals(session.apiKeyClaims().projectId())) {
                replyError(j, Reasons.PROJECT_MISMATCH);
                return;
            }
        }
        String expired = expired(claims);
        if (expired != null) {
            // the connect-time apikey expired and no new access_token came with the join: refused
            // before anything (history, presence) is sent, as Supabase's join refuses it
            replyError(j, expired);
            return;
        }
        PendingJoin pending = new PendingJoin(this, j, request, claims);
        session.pendingJoins.put(topic, pending);
        pending.start();
    }

    /**
     * @return {@code InvalidJWTToken: Token has expired N seconds ago} (Supabase's words) when the
     *     claims' {@code exp} is not ahead of the clock, else null
     */
    String expired(Claims claims) {
        String expired = claims.expiredMessage(services.clock().instant());
        return expired == null ? null : AuthException.INVALID + ": " + expired;
    }

    void replyError(PhoenixMessage.Join j, String reason) {
        session.send(new PhoenixMessage.Reply(j.joinRef(), j.ref(), j.topic(), "error", Replies.reason(reason)));
    }
}
