package dev.aura.realtime.cdc.leader;

import dev.aura.realtime.cdc.fence.LeaderWork;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What the fake CDC loops "published", in the order they published it. Each loop checks the
 * fence before every publish, exactly as the real pipeline must.
 */
final class PublishLog {
    /** One publish by {@code identity} in the term of {@code epoch}, at {@code nanos} (System.nanoTime) and {@code at}. */
    record Publish(String identity, long epoch, long nanos, Instant at) {}

    static final long PUBLISH_INTERVAL_MS = 20;

    private final List<Publish> publishes = new ArrayList<>();

    /** A work that publishes every 20 ms while its fence passes. */
    LeaderWork workFor(String identity) {
        return gate -> {
            while (true) {
                gate.checkFence();
                add(new Publish(identity, gate.leaseEpoch(), System.nanoTime(), Instant.now()));
                Thread.sleep(PUBLISH_INTERVAL_MS);
            }
        };
    }

    synchronized List<Publish> snapshot() {
        return List.copyOf(publishes);
    }

    /** How often the publisher changes from one publish to the next: 0 with one leader, 1 per handover. */
    synchronized int handovers() {
        int switches = 0;
        for (int i = 1; i < publishes.size(); i++) {
            if (!publishes.get(i).identity().equals(publishes.get(i - 1).identity())) {
                switches++;
            }
        }
        return switches;
    }

    synchronized Optional<Publish> first(String identity) {
        return publishes.stream().filter(p -> p.identity().equals(identity)).findFirst();
    }

    synchronized Optional<Publish> last(String identity) {
        return publishes.stream().filter(p -> p.identity().equals(identity)).reduce((a, b) -> b);
    }

    synchronized long count(String identity) {
        return publishes.stream().filter(p -> p.identity().equals(identity)).count();
    }

    private synchronized void add(Publish publish) {
        publishes.add(publish);
    }
}
