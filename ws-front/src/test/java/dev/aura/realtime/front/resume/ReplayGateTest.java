package dev.aura.realtime.front.resume;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.aura.realtime.common.wire.ChangeEvent;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/** The seam of a resume: replay, then held live changes, each change once and in id order. */
class ReplayGateTest {
    private static ChangeEvent e(String id) {
        return new ChangeEvent(id, "p", "t", "INSERT", List.of("s1"), JsonNodeFactory.instance.objectNode());
    }

    private static List<String> ids(List<ChangeEvent> events) {
        return events.stream().map(ChangeEvent::eventId).toList();
    }

    @Test
    void heldChangesAlreadyReplayedAreDroppedAtTheSeam() {
        List<ChangeEvent> replayed = List.of(e("0/10:0"), e("0/10:1"), e("0/20:0"));
        List<ChangeEvent> held = List.of(e("0/10:1"), e("0/20:0"), e("0/30:0"), e("0/30:1"));
        assertThat(ids(ReplayGate.merge(replayed, held)))
                .containsExactly("0/10:0", "0/10:1", "0/20:0", "0/30:0", "0/30:1");
    }

    @Test
    void withoutAReplayEveryHeldChangeGoesOutOnce() {
        List<ChangeEvent> held = List.of(e("0/30:0"), e("0/30:0"), e("0/31:0"));
        assertThat(ids(ReplayGate.merge(List.of(), held))).containsExactly("0/30:0", "0/31:0");
    }

    @Test
    void liveCopiesAtOrBeforeTheSeamAreDroppedAfterGoingLive() {
        ReplayGate gate = new ReplayGate(Long.MAX_VALUE);
        assertThat(gate.hold(e("0/40:0"))).isTrue(); // held
        assertThat(ids(gate.goLive("0/30:0"))).containsExactly("0/40:0");
        assertThat(gate.hold(e("0/40:0"))).isTrue(); // a copy still in flight
        assertThat(gate.hold(e("0/3F:0"))).isTrue();
        assertThat(gate.hold(e("0/41:0"))).isFalse(); // new: delivered normally
    }

    @Test
    void overTheByteBoundTheGateOverflowsInsteadOfGrowing() {
        ReplayGate gate = new ReplayGate(1000);
        for (int i = 0; i < 10; i++) {
            gate.hold(e("0/" + Integer.toHexString(100 + i) + ":0"));
        }
        assertThat(gate.overflowed()).isTrue();
        assertThat(gate.goLive(null)).isEmpty();
    }

    @Test
    void idsCompareByLsnThenOrdinal() {
        assertThat(EventIds.compare("0/FF:2", "1/0:0")).isNegative();
        assertThat(EventIds.compare("0/10:10", "0/10:9")).isPositive();
        assertThat(EventIds.after("0/10:1", null)).isTrue();
        assertThat(EventIds.valid("0/10:1")).isTrue();
        assertThat(EventIds.valid("garbage")).isFalse();
    }

    @Test
    void heldChangesGoOutInIdOrderWhateverTheirArrival() {
        List<ChangeEvent> held = List.of(e("0/31:0"), e("0/30:0"), e("0/32:0"));
        assertThat(ids(ReplayGate.merge(List.of(e("0/20:0")), held)))
                .containsExactly("0/20:0", "0/30:0", "0/31:0", "0/32:0");
    }

    @Test
    void aLiveChangeArrivingWhileTheHeldOnesAreHandedOnCannotOvertakeThem() throws Exception {
        ReplayGate gate = new ReplayGate(Long.MAX_VALUE);
        gate.hold(e("0/30:0"));
        gate.hold(e("0/31:0"));
        List<String> sent = new CopyOnWriteArrayList<>();
        CountDownLatch started = new CountDownLatch(1);
        Thread relay = new Thread(() -> {
            started.countDown();
            if (!gate.hold(e("0/32:0"))) {
                sent.add("0/32:0"); // the relay delivers it live
            }
        });
        gate.goLive("0/20:0", c -> {
            sent.add(c.eventId());
            if (!relay.isAlive() && started.getCount() == 1) {
                relay.start();
                try {
                    started.await();
                    Thread.sleep(50); // the relay is now waiting for the gate
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        relay.join(5_000);
        assertThat(sent).containsExactly("0/30:0", "0/31:0", "0/32:0");
    }
}
