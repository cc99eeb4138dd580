package dev.aura.realtime.cdc.registry;

import dev.aura.realtime.common.wire.SubscriptionEntry;
import io.nats.client.api.KeyValueEntry;
import io.nats.client.api.KeyValueOperation;
import io.nats.client.api.KeyValueWatcher;
import java.time.Clock;
import java.util.HashSet;
import java.util.Set;
import java.util.function.Consumer;

/**
 * One watch of the registry bucket: replays the bucket into a fresh {@link SubscriptionIndex}
 * (each entry judged by {@link EntryTrust}), hands itself to {@code loaded} at end of data (the
 * watch swaps its index in, {@link RegistryWatch}), then applies live events to that index and
 * reports each one's sequence to {@link ReadYourWrites}. jnats calls it on its dispatcher thread.
 */
final class RegistryLoader implements KeyValueWatcher {
    /**
     * What the loaders of one watch share: how entries are judged, where a live loader's progress
     * is told, the clock of write times, and who swaps a loaded snapshot in.
     */
    record Shared(EntryTrust trust, ReadYourWrites reads, Clock clock, Consumer<RegistryLoader> loaded) {}

    private final SubscriptionIndex target;
    private final Shared shared;
    private final Set<String> deletedWhileLoading = new HashSet<>();
    private boolean live;
    /** Stream sequence of the last event this loader applied (set under {@link ReadYourWrites}' lock once live). */
    volatile long applied;

    RegistryLoader(SubscriptionIndex target, Shared shared) {
        this.target = target;
        this.shared = shared;
    }

    @Override
    public void watch(KeyValueEntry e) {
        apply(e);
        if (live) {
            shared.reads().applied(this, e.getRevision());
        } else {
            applied = e.getRevision();
        }
    }

    private void apply(KeyValueEntry e) {
        String key = e.getKey();
        if (e.getOperation() != KeyValueOperation.PUT) {
            target.remove(key);
            shared.trust().forget(key);
            if (!live) {
                deletedWhileLoading.add(key);
            }
            return;
        }
        SubscriptionEntry entry = shared.trust().accept(key, e.getValue());
        if (entry == null) {
            target.remove(key);
            return;
        }
        long written = e.getCreated() == null
                ? shared.clock().millis()
                : e.getCreated().toInstant().toEpochMilli();
        target.put(key, entry, written);
    }

    @Override
    public void endOfData() {
        shared.loaded().accept(this);
    }

    /** The index this loader fills. */
    SubscriptionIndex index() {
        return target;
    }

    /** Keys deleted while the snapshot loaded: the previous view's entries of them are not kept. */
    Set<String> deletedWhileLoading() {
        return deletedWhileLoading;
    }

    /** From now on each event's sequence is reported as applied to the current view. */
    void goLive() {
        live = true;
    }
}
