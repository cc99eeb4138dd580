package dev.aura.realtime.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class RawWebSocketTest {

    @Test
    void maskedTextFramesUnmaskToTheTextWithSevenAndSixteenBitLengths() {
        for (int length : new int[] {0, 125, 126, 300, 65_535}) {
            String text = "x".repeat(length);
            byte[] frame = RawWebSocket.maskedText(text);
            assertThat(frame[0] & 0xFF).isEqualTo(0x81);
            assertThat(frame[1] & 0x80).as("mask bit").isEqualTo(0x80);
            int header = length < 126 ? 2 : 4;
            int declared = length < 126 ? frame[1] & 0x7F : ((frame[2] & 0xFF) << 8) | (frame[3] & 0xFF);
            assertThat(declared).isEqualTo(length);
            byte[] mask = {frame[header], frame[header + 1], frame[header + 2], frame[header + 3]};
            byte[] payload = new byte[length];
            for (int i = 0; i < length; i++) {
                payload[i] = (byte) (frame[header + 4 + i] ^ mask[i % 4]);
            }
            assertThat(new String(payload, StandardCharsets.UTF_8)).isEqualTo(text);
        }
        assertThatThrownBy(() -> RawWebSocket.maskedText("x".repeat(65_536)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void readUntilStopsAtTheMarkerAndFailsWhenTheStreamEndsFirst() throws IOException {
        ByteArrayInputStream in =
                new ByteArrayInputStream("HTTP/1.1 101 Switching\r\n\r\nrest".getBytes(StandardCharsets.US_ASCII));
        assertThat(RawWebSocket.readUntil(in, "\r\n\r\n")).isEqualTo("HTTP/1.1 101 Switching\r\n\r\n");
        assertThatThrownBy(() -> RawWebSocket.readUntil(in, "phx_reply"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("read: rest");
    }
}
