package dev.aura.realtime.cdc.join;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class FairQueueTest {
    private static FairQueue.Limits limits(int workers, int perProject, int batch, int pending) {
        return new FairQueue.Limits(workers, perProject, batch, pending, 1 << 20, Duration.ofSeconds(30));
    }

    @Test
    void projectsTakeTurnsSoAFloodWaitsBehindItself() throws Exception {
        List<String> order = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch gate = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(1 + 3);
        try (FairQueue<String> q = new FairQueue<>("t", limits(1, 1, 2, 100), s -> 1, (p, batch, expired) -> {
            try {
                gate.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            order.add(p + ":" + batch.size());
            batch.forEach(b -> done.countDown());
            return List.of();
        })) {
            q.offer("flood", "f0"); // the worker takes this one and waits at the gate
            Thread.sleep(100);
            for (int i = 1; i < 10; i++) {
                q.offer("flood", "f" + i);
            }
            q.offer("other", "o1");
            gate.countDown();
            assertThat(done.await(5, TimeUnit.SECONDS)).isTrue();
            // flood's first batch, then the other project's turn before the rest of flood's backlog
            List<String> firstTwo;
            synchronized (order) { // the worker may still append flood's later batches
                firstTwo = List.copyOf(order.subList(0, 2));
            }
            assertThat(firstTwo).containsExactly("flood:1", "other:1");
        }
    }

    @Test
    void aFullProjectQueueRefusesOnlyThatProject() {
        CountDownLatch never = new CountDownLatch(1);
        try (FairQueue<String> q = new FairQueue<>("t", limits(1, 1, 1, 3), s -> 1, (p, batch, expired) -> {
            try {
                never.await(2, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return List.of();
        })) {
            int accepted = 0;
            for (int i = 0; i < 10; i++) {
                accepted += q.offer("flood", "f" + i) ? 1 : 0;
            }
            assertThat(accepted).as("one in the worker, three waiting").isLessThanOrEqualTo(4);
            assertThat(q.offer("other", "o")).isTrue();
            never.countDown();
        }
    }

    @Test
    void itemsNotAnsweredInTheirSliceComeBackFirst() throws Exception {
        List<String> seen = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch done = new CountDownLatch(4);
        try (FairQueue<String> q = new FairQueue<>("t", limits(1, 1, 4, 100), s -> 1, (p, batch, expired) -> {
            seen.add(batch.get(0));
            done.countDown();
            return batch.subList(1, batch.size()); // answers one per turn
        })) {
            for (String s : List.of("a", "b", "c", "d")) {
                q.offer("p", s);
            }
            assertThat(done.await(5, TimeUnit.SECONDS)).isTrue();
            assertThat(seen).containsExactly("a", "b", "c", "d");
        }
    }
}
