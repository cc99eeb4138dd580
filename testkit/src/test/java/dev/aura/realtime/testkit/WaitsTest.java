package dev.aura.realtime.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class WaitsTest {

    @Test
    void returnsAsSoonAsTheConditionHoldsAndReportsTheStateWhenItNeverDoes() {
        AtomicInteger polls = new AtomicInteger();
        Waits.until(
                "three polls",
                Duration.ofSeconds(5),
                Duration.ofMillis(10),
                () -> polls.incrementAndGet() >= 3,
                () -> "");
        assertThat(polls).hasValue(3);

        assertThatThrownBy(() -> Waits.until(
                        "the impossible", Duration.ofMillis(100), Duration.ofMillis(10), () -> false, () -> "state 42"))
                .isInstanceOf(AssertionError.class)
                .hasMessage("the impossible not reached within PT0.1S: state 42");
    }
}
