package dev.aura.realtime.front.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class RefusedSocketTest {
    @Test
    void aCloseReasonFitsTheFramesLimitOfUtf8BytesWithoutSplittingACharacter() {
        String shortReason = "InvalidJWTToken: Token has expired 12 seconds ago";
        assertThat(RefusedSocket.closeReason(shortReason)).isEqualTo(shortReason);

        String longReason = "InvalidJWTToken: " + "é".repeat(100);
        String cut = RefusedSocket.closeReason(longReason);
        assertThat(cut.getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(123);
        assertThat(longReason).startsWith(cut);
        assertThat(cut).endsWith("é");
    }
}
