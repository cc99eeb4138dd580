package dev.aura.realtime.front.channel;

import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.front.broadcast.PrivateChannels;
import dev.aura.realtime.front.postgres.PostgresChanges;
import dev.aura.realtime.front.protocol.JoinConfig;
import dev.aura.realtime.front.protocol.PhoenixMessage;
import dev.aura.realtime.front.resume.ResumeJoin;
import java.util.concurrent.CompletableFuture;

/**
 * One join in flight through the {@link JoinPipeline}, from its checks to its reply; the
 * connection's {@link ChannelTable} holds it by topic until its checks are read. Event loop only.
 */
final class Joining {
    final PhoenixMessage.Join join;
    final JoinConfig config;
    final Claims claims;
    /** The channel's gate: a private channel's read check, or the project's {@code private_only}. */
    final CompletableFuture<PrivateChannels.Gate> gate;
    /** postgres_changes resume (docs/design.md R), or null. */
    final ResumeJoin resume;
    /** With {@code postgres_changes_options.wait}, the {@code System.nanoTime()} by which changes must flow, else 0. */
    final long deadline;

    /** The binding checks last asked. */
    PostgresChanges.Checks checks = PostgresChanges.Checks.NONE;
    /** Resume's decision, once planned. */
    ResumeJoin.Plan plan;
    /** The reply (ok or error) after the channel went live was sent, or is no longer wanted. */
    boolean replied;

    Joining(PhoenixMessage.Join join, Claims claims, CompletableFuture<PrivateChannels.Gate> gate, ResumeJoin resume) {
        this.join = join;
        this.config = join.config();
        this.claims = claims;
        this.gate = gate;
        this.resume = resume;
        long waitMs = config.postgresChangesOptions().waitMs();
        this.deadline = waitMs > 0 && !config.bindings().isEmpty() ? System.nanoTime() + waitMs * 1_000_000 : 0;
    }

    String topic() {
        return join.topic();
    }
}
