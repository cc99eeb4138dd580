package dev.aura.realtime.front.relay;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class EventIdWindowTest {

    @Test
    void aRepublishedEventIsDroppedButTheSameIdOnAnotherSubjectIsNot() {
        EventIdWindow window = new EventIdWindow(10, 1 << 20);
        assertThat(window.firstSighting("aura.realtime.changes.p1.t", "0/16B3748:0"))
                .isTrue();
        assertThat(window.firstSighting("aura.realtime.changes.p1.t", "0/16B3748:0"))
                .isFalse();
        assertThat(window.firstSighting("aura.realtime.changes.p1.t", "0/16B3748:1"))
                .isTrue();
        assertThat(window.firstSighting("aura.realtime.changes.p2.t", "0/16B3748:0"))
                .as("another CDC source (a dedicated cluster) has LSNs of its own")
                .isTrue();
    }

    @Test
    void theWindowIsBoundedInEntriesAndInBytes_oldestForgottenFirst() {
        EventIdWindow byCount = new EventIdWindow(3, 1 << 20);
        for (int i = 0; i < 4; i++) {
            byCount.firstSighting("s", "id-" + i);
        }
        assertThat(byCount.size()).isEqualTo(3);
        assertThat(byCount.firstSighting("s", "id-3")).isFalse();
        assertThat(byCount.firstSighting("s", "id-0")).as("forgotten").isTrue();

        long oneEntry = EventIdWindow.ENTRY_OVERHEAD_BYTES + 2L * "s id-0".length();
        EventIdWindow byBytes = new EventIdWindow(1_000, 2 * oneEntry);
        for (int i = 0; i < 10; i++) {
            byBytes.firstSighting("s", "id-" + i);
        }
        assertThat(byBytes.size()).isEqualTo(2);
        assertThat(byBytes.bytes()).isLessThanOrEqualTo(2 * oneEntry);
    }

    @Test
    void aZeroWindowDropsNothing() {
        EventIdWindow off = new EventIdWindow(0, 0);
        assertThat(off.firstSighting("s", "a")).isTrue();
        assertThat(off.firstSighting("s", "a")).isTrue();
    }
}
