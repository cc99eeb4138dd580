package dev.aura.realtime.cdc.startup;

import dev.aura.realtime.cdc.failure.CdcReason;
import dev.aura.realtime.cdc.health.CdcState;
import dev.aura.realtime.cdc.http.HttpApi;
import dev.aura.realtime.cdc.leader.LeaderElection;
import dev.aura.realtime.cdc.leader.LeadershipStatus;

/**
 * The leader election as {@code /health} shows it, and why this process does not lead mirrored
 * into the {@link CdcState} (for {@code /health} and the status clients read). Before the election
 * is started it shows "not leading" in the configured mode. Thread-safe.
 */
public final class LeadershipView {
    private final String configuredMode;
    private final CdcState state;
    private volatile LeaderElection election;

    public LeadershipView(String configuredMode, CdcState state) {
        this.configuredMode = configuredMode;
        this.state = state;
    }

    /** The election of this process, once started. */
    public void use(LeaderElection e) {
        election = e;
    }

    public HttpApi.LeaderView view() {
        LeaderElection e = election;
        if (e == null) {
            return new HttpApi.LeaderView(false, null, 0, configuredMode);
        }
        LeadershipStatus s = e.status();
        return new HttpApi.LeaderView(s.leader(), s.holder(), s.leaseEpoch(), s.mode());
    }

    /** Mirrors why this process does not lead into the CDC state. */
    public void sync() {
        LeaderElection e = election;
        if (e == null) {
            return;
        }
        LeadershipStatus s = e.status();
        if (s.leader() || state.snapshot().leader()) {
            return; // the work itself reports leading/stopped
        }
        if (s.reason() != null && !s.reason().startsWith("standby")) {
            state.notLeading(CdcReason.LEASE_UNAVAILABLE, s.reason());
        } else {
            state.leading(false);
        }
    }
}
