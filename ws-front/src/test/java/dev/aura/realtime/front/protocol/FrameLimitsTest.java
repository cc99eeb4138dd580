package dev.aura.realtime.front.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.common.wire.WireJson;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * Frames over the data limits (docs/design.md C13): ws-front reads what the pipeline carries (4,096
 * levels, every numeric), and a frame over a limit is refused with its refs, so the sender gets an
 * error reply instead of a timeout.
 */
class FrameLimitsTest {
    private final JsonFrames json = new JsonFrames(WireJson.dataMapper(), 100);

    private PhoenixMessage.Inbound decode(String text, Vsn vsn) {
        ByteBuf buf = Unpooled.copiedBuffer(text, StandardCharsets.UTF_8);
        try {
            return json.decode(buf, vsn);
        } finally {
            buf.release();
        }
    }

    private static String nested(int depth) {
        return "[".repeat(depth) + "1" + "]".repeat(depth);
    }

    @Test
    void aPayloadAsDeepAsThePipelineCarriesIsRead() {
        String frame =
                "[\"1\",\"2\",\"realtime:room\",\"broadcast\",{\"type\":\"broadcast\",\"event\":\"e\",\"payload\":"
                        + nested(WireJson.MAX_VALUE_NESTING) + "}]";
        assertThat(decode(frame, Vsn.V2)).isNotInstanceOf(PhoenixMessage.Malformed.class);
    }

    @Test
    void aFrameNestedPastTheLimitIsRefusedWithItsRefs() {
        String v2 = "[\"1\",\"7\",\"realtime:room\",\"broadcast\",{\"type\":\"broadcast\",\"event\":\"e\",\"payload\":"
                + nested(20_000) + "}]";
        assertThat(decode(v2, Vsn.V2)).isInstanceOfSatisfying(PhoenixMessage.Malformed.class, m -> {
            assertThat(m.ref()).isEqualTo("7");
            assertThat(m.joinRef()).isEqualTo("1");
            assertThat(m.topic()).isEqualTo("realtime:room");
            assertThat(m.reason()).isEqualTo("the payload is nested deeper than 4096 levels");
        });
        String v1 = "{\"topic\":\"realtime:room\",\"event\":\"broadcast\",\"payload\":" + nested(20_000)
                + ",\"ref\":\"9\"}";
        assertThat(decode(v1, Vsn.V1)).isInstanceOfSatisfying(PhoenixMessage.Malformed.class, m -> {
            assertThat(m.ref()).isEqualTo("9");
            assertThat(m.topic()).isEqualTo("realtime:room");
        });
    }
}
