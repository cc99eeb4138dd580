package dev.aura.realtime.front.session;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class RateWindowTest {

    @Test
    void theLimitAppliesPerSecondNotPerLifetime() {
        RateWindow w = new RateWindow(3);
        long now = 1_796_000_000_000L; // a wall-clock epoch ms, as the server passes
        for (int i = 0; i < 3; i++) {
            assertThat(w.tryAcquire(now + i)).isTrue();
        }
        assertThat(w.tryAcquire(now + 999)).as("4th event within the second").isFalse();
        // a later second starts a new window (this failed: the window starting at Long.MIN_VALUE never ended)
        for (int second = 1; second <= 100; second++) {
            for (int i = 0; i < 3; i++) {
                assertThat(w.tryAcquire(now + second * 1000L + i))
                        .as("second " + second + " event " + i)
                        .isTrue();
            }
            assertThat(w.tryAcquire(now + second * 1000L + 500)).isFalse();
        }
    }

    @Test
    void worksFromEpochZeroAndNegativeClocksToo() {
        RateWindow w = new RateWindow(1);
        assertThat(w.tryAcquire(0)).isTrue();
        assertThat(w.tryAcquire(999)).isFalse();
        assertThat(w.tryAcquire(1000)).isTrue();
    }
}
