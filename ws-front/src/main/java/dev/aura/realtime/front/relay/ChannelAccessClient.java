package dev.aura.realtime.front.relay;

import dev.aura.realtime.common.wire.ChannelAccess;
import java.util.concurrent.CompletableFuture;

/**
 * Asks a cdc-worker about private channels (docs/design.md H1): read and write checks, replay,
 * persisted broadcasts, the project's {@code private_only}. The future never fails: no responder,
 * a timeout or an undecodable reply become {@link ChannelAccess.Reply#failed} with
 * {@link #UNAVAILABLE}, which callers treat as a denial. Completes on a relay thread.
 */
@FunctionalInterface
public interface ChannelAccessClient {
    /** The error of a request no cdc-worker answered. */
    String UNAVAILABLE = "DatabaseUnavailable: could not check this channel now, try again";

    CompletableFuture<ChannelAccess.Reply> ask(ChannelAccess.Request request);
}
