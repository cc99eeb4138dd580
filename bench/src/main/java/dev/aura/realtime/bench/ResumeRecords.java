package dev.aura.realtime.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.common.wire.ResumeRecord;
import io.nats.client.Connection;
import io.nats.client.KeyValue;
import io.nats.client.api.KeyValueEntry;
import java.util.HashSet;
import java.util.Set;

/**
 * Figure 27's per-turn check (issue 39): whether ws-front wrote a live resume record (KV
 * {@value ResumeRecord#BUCKET}) for the turn's client, a new user. A record is this turn's when its
 * key was not there when the turn began, it is not parked ({@code parked_at_ms} 0) and it was
 * written during the turn ({@code updated_at_ms}); keys whose value is not a record (ws-front's
 * pointers to a record key) are skipped.
 */
final class ResumeRecords {
    private final Connection nats;
    /** The window of the last record {@link #appeared} found, in seconds; -1 before any. */
    private volatile int lastWindow = -1;

    ResumeRecords(Connection nats) {
        this.nats = nats;
    }

    /** The keys now; empty when the bucket does not exist. */
    Set<String> keys() {
        try {
            return new HashSet<>(nats.keyValue(ResumeRecord.BUCKET).keys());
        } catch (Exception e) {
            return Set.of();
        }
    }

    /** Whether a live record written since {@code sinceMs} appeared under a key not in {@code before}. */
    boolean appeared(Set<String> before, long sinceMs) {
        KeyValue kv;
        try {
            kv = nats.keyValue(ResumeRecord.BUCKET);
        } catch (Exception e) {
            return false;
        }
        for (String k : keys()) {
            if (before.contains(k)) {
                continue;
            }
            try {
                KeyValueEntry e = kv.get(k);
                if (e == null || e.getValue() == null || e.getValue().length == 0 || e.getValue()[0] != '{') {
                    continue;
                }
                JsonNode r = Stack.JSON.readTree(e.getValue());
                if (r.path("updated_at_ms").asLong() >= sinceMs
                        && r.path("parked_at_ms").asLong() == 0) {
                    lastWindow = r.path("window_seconds").asInt();
                    return true;
                }
            } catch (Exception unreadable) {
                // not a record: skipped
            }
        }
        return false;
    }

    /** Waits up to {@code ms} for {@link #appeared}. */
    boolean await(Set<String> before, long sinceMs, long ms) {
        long deadline = System.nanoTime() + ms * 1_000_000L;
        while (System.nanoTime() < deadline) {
            if (appeared(before, sinceMs)) {
                return true;
            }
            Procs.sleep(100);
        }
        return false;
    }

    int lastWindow() {
        return lastWindow;
    }
}
