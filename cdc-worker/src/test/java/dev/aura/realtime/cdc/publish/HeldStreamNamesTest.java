package dev.aura.realtime.cdc.publish;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.common.wire.HeldStreams;
import org.junit.jupiter.api.Test;

/** ws-front's inspector reads the streams the worker writes by the names in common (HeldStreams). */
class HeldStreamNamesTest {
    @Test
    void theWorkersStreamNamesAreTheContractsNames() {
        for (String project : new String[] {"0b2f6c1e-7f1a-4f9e-9a55-1c0de0000001", "odd.id~x", "a_b"}) {
            assertThat(ProjectStreams.streamName(ProjectStreams.Kind.LATE, project))
                    .isEqualTo(HeldStreams.late(project));
            assertThat(ProjectStreams.streamName(ProjectStreams.Kind.QUARANTINE, project))
                    .isEqualTo(HeldStreams.quarantine(project));
        }
    }
}
