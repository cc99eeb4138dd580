package dev.aura.realtime.front.channel;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.front.protocol.Reasons;
import dev.aura.realtime.front.protocol.Topics;
import dev.aura.realtime.front.protocol.Vsn;
import dev.aura.realtime.front.testing.ChannelHarness;
import org.junit.jupiter.api.Test;

/**
 * Hostile values a tenant's client can put in one frame are refused with a clear error before
 * they cost a registry entry, a database check or presence state (docs/design.md D8). The
 * harness allows 5 bindings per join and 128-byte presence payloads.
 */
class HostileInputBoundsTest {
    private final ChannelHarness h = new ChannelHarness();

    private static String join(String topic, String config) {
        return "[\"1\",\"1\",\"" + topic + "\",\"phx_join\",{\"config\":" + config + "}]";
    }

    private static String reason(JsonNode reply) {
        return reply.get(4).get("response").get("reason").asText();
    }

    private static String bindings(int n) {
        StringBuilder sb = new StringBuilder("{\"postgres_changes\":[");
        for (int i = 0; i < n; i++) {
            sb.append(i == 0 ? "" : ",")
                    .append("{\"event\":\"*\",\"schema\":\"public\",\"table\":\"t\",\"filter\":\"id=eq.")
                    .append(i)
                    .append("\"}");
        }
        return sb.append("]}").toString();
    }

    @Test
    void fiftyThousandBindingsInOneJoinAreRefusedBeforeAnyCheckOrRegistryEntry() {
        ChannelHarness.Conn c = h.connect(Vsn.V2);
        c.send(join("realtime:db", bindings(50_000)));
        JsonNode reply = c.next();
        assertThat(reply.get(4).get("status").asText()).isEqualTo("error");
        assertThat(reason(reply)).isEqualTo(Reasons.tooManyBindings(5));
        assertThat(h.checker.asked).isEmpty();
        assertThat(h.registry.puts).isEmpty();
        assertThat(h.metrics.channels()).isZero();
        c.close();
    }

    @Test
    void bindingsUpToTheLimitJoin() {
        ChannelHarness.Conn c = h.connect(Vsn.V2);
        c.send(join("realtime:db", bindings(5)));
        JsonNode reply = c.next();
        assertThat(reply.get(4).get("status").asText()).isEqualTo("ok");
        assertThat(h.registry.puts).hasSize(5);
        c.close();
    }

    @Test
    void aChannelNameOverTheByteLimitIsRefusedAndOneAtTheLimitJoins() {
        ChannelHarness.Conn c = h.connect(Vsn.V2);
        String longest = Topics.PREFIX + "a".repeat(Topics.MAX_NAME_BYTES);
        c.send(join(longest + "b", "{}"));
        assertThat(reason(c.next())).isEqualTo(Reasons.TOPIC_TOO_LONG);
        c.send(join(Topics.PREFIX + "x".repeat(1_000_000), "{}"));
        assertThat(reason(c.next())).isEqualTo(Reasons.TOPIC_TOO_LONG);
        // multi-byte characters count as their UTF-8 bytes: 100 x 3 bytes
        c.send(join(Topics.PREFIX + "\u20ac".repeat(100), "{}"));
        assertThat(reason(c.next())).isEqualTo(Reasons.TOPIC_TOO_LONG);
        c.send(join(longest, "{}"));
        assertThat(c.next().get(4).get("status").asText()).isEqualTo("ok");
        c.close();
    }

    @Test
    void aPresencePayloadOverTheLimitIsRefusedWithPayloadTooLarge() {
        ChannelHarness.Conn c = h.connect(Vsn.V2);
        c.send(join("realtime:room", "{}"));
        c.drain();
        c.send("[\"1\",\"2\",\"realtime:room\",\"presence\",{\"type\":\"presence\",\"event\":\"track\","
                + "\"payload\":{\"blob\":\"" + "x".repeat(5_000_000) + "\"}}]");
        JsonNode reply = c.next();
        assertThat(reply.get(4).get("status").asText()).isEqualTo("error");
        assertThat(reason(reply)).isEqualTo(Reasons.presencePayloadTooLarge(128));
        // a small one reaches the presence extension (unavailable in the harness)
        c.send("[\"1\",\"3\",\"realtime:room\",\"presence\",{\"type\":\"presence\",\"event\":\"track\","
                + "\"payload\":{\"name\":\"ann\"}}]");
        assertThat(reason(c.next())).isEqualTo(Reasons.PRESENCE_UNAVAILABLE);
        c.close();
    }
}
