package dev.aura.realtime.cdc.rls;

import dev.aura.realtime.common.wire.SubscriptionEntry;
import java.util.ArrayList;
import java.util.List;

/** Allows every matched binding: the behaviour for tables without row level security. */
public final class OpenAccess implements AccessPolicy {
    @Override
    public List<List<String>> allowed(List<Candidates> batch) {
        List<List<String>> out = new ArrayList<>(batch.size());
        for (Candidates c : batch) {
            out.add(c.matched().stream().map(SubscriptionEntry::subId).toList());
        }
        return out;
    }
}
