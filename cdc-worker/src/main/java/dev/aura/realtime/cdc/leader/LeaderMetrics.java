package dev.aura.realtime.cdc.leader;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.Supplier;

/**
 * Meters of leader election: {@value #TRANSITIONS} counts terms begun ({@code direction=acquired})
 * and ended ({@code direction=lost}, including shutdown); gauge {@value #LEADER} is 1 while
 * {@link LeadershipStatus#leader()}.
 */
final class LeaderMetrics {
    static final String TRANSITIONS = "aura.cdc.leader.transitions";
    static final String LEADER = "aura.cdc.leader";

    private final Counter acquired;
    private final Counter lost;

    LeaderMetrics(MeterRegistry registry, Supplier<LeadershipStatus> status) {
        acquired = Counter.builder(TRANSITIONS)
                .tag("direction", "acquired")
                .description("Leadership terms begun")
                .register(registry);
        lost = Counter.builder(TRANSITIONS)
                .tag("direction", "lost")
                .description("Leadership terms ended (loss, fence, shutdown)")
                .register(registry);
        Gauge.builder(LEADER, status, s -> s.get().leader() ? 1 : 0)
                .description("1 while this process leads the CDC slot")
                .register(registry);
    }

    void acquired() {
        acquired.increment();
    }

    void lost() {
        lost.increment();
    }
}
