package dev.aura.realtime.front.relay;

import dev.aura.realtime.common.wire.CdcStatus;
import dev.aura.realtime.common.wire.ChangeEvent;
import dev.aura.realtime.common.wire.DbBroadcast;
import dev.aura.realtime.front.protocol.UserBroadcast;

/**
 * Receives what the relay takes off NATS, already decoded and with this replica's own echoes
 * dropped. Called on the NATS dispatcher thread; implementations hop to event loops themselves.
 */
public interface RelayListener {
    /** A broadcast published by another replica. */
    void onBroadcast(String projectId, String channel, UserBroadcast message);

    /** A change event from the cdc-worker. */
    void onChange(ChangeEvent event);

    /** A row of the project's messages table, published by the cdc-worker (docs/design.md H2). */
    void onDbBroadcast(String projectId, DbBroadcast message);

    /** A cdc-worker status message. */
    void onCdcStatus(CdcStatus status);
}
