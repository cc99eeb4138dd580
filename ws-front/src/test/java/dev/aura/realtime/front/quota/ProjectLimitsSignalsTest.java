package dev.aura.realtime.front.quota;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.common.wire.ProjectLimits;
import dev.aura.realtime.common.wire.UsageReport;
import dev.aura.realtime.front.protocol.Reasons;
import dev.aura.realtime.front.protocol.Vsn;
import dev.aura.realtime.front.testing.ChannelHarness;
import dev.aura.realtime.front.testing.FrontFixture;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What a client is told when its project reaches a per-project limit: Supabase's codes and words,
 * as a join error or as a {@code system} error followed by {@code phx_close}.
 */
class ProjectLimitsSignalsTest {
    private final ChannelHarness h = new ChannelHarness();

    private static String join(String ref, String topic) {
        return "[\"" + ref + "\",\"" + ref + "\",\"" + topic + "\",\"phx_join\",{\"config\":{}}]";
    }

    private static String broadcast(String joinRef, String ref, String topic, String payload) {
        return "[\"" + joinRef + "\",\"" + ref + "\",\"" + topic
                + "\",\"broadcast\",{\"type\":\"broadcast\",\"event\":\"e\",\"payload\":" + payload + "}]";
    }

    private void limit(ProjectLimits row) {
        h.overrides.rows.put(FrontFixture.PROJECT, row);
    }

    private static String reason(JsonNode reply) {
        return reply.get(4).get("response").get("reason").asText();
    }

    @Test
    void joinsPerSecondCountEveryConnectionOfTheProjectAndTheOtherReplicas() {
        limit(new ProjectLimits(null, null, 3, null, null, null, null));
        ChannelHarness.Conn a = h.connect(Vsn.V2);
        ChannelHarness.Conn b = h.connect(Vsn.V2);
        a.send(join("1", "realtime:r1"));
        a.send(join("2", "realtime:r2"));
        b.send(join("1", "realtime:r3"));
        assertThat(a.drain()).hasSize(2);
        assertThat(b.drain()).hasSize(1);
        b.send(join("2", "realtime:r4"));
        assertThat(reason(b.next())).isEqualTo(Reasons.PROJECT_TOO_MANY_JOINS);
        h.clock.advance(java.time.Duration.ofSeconds(1));
        h.others.counts.put(FrontFixture.PROJECT, new UsageReport.Counts(0, 3, 0, 0, 0));
        b.send(join("3", "realtime:r5"));
        assertThat(reason(b.next())).isEqualTo(Reasons.PROJECT_TOO_MANY_JOINS);
        a.close();
        b.close();
    }

    @Test
    void messagesPerSecondOfTheProjectCloseTheChannelWithMessagePerSecondRateLimitReached() {
        limit(new ProjectLimits(null, 2, null, null, null, null, null));
        ChannelHarness.Conn a = h.connect(Vsn.V2);
        a.send(join("1", "realtime:room"));
        a.drain();
        a.send(broadcast("1", "2", "realtime:room", "{}"));
        a.send(broadcast("1", "3", "realtime:room", "{}"));
        assertThat(h.publisher.published).hasSize(2);
        a.send(broadcast("1", "4", "realtime:room", "{}"));
        List<JsonNode> out = a.drain();
        assertThat(out).hasSize(2);
        assertThat(out.get(0).get(3).asText()).isEqualTo("system");
        assertThat(out.get(0).get(4).get("message").asText()).isEqualTo(Reasons.PROJECT_TOO_MANY_MESSAGES);
        assertThat(out.get(1).get(3).asText()).isEqualTo("phx_close");
        assertThat(h.publisher.published).hasSize(2);
        a.close();
    }

    @Test
    void bytesPerSecondOfTheProjectCountBroadcastPayloads() {
        limit(new ProjectLimits(null, null, null, null, 10, null, null));
        ChannelHarness.Conn a = h.connect(Vsn.V2);
        a.send(join("1", "realtime:room"));
        a.drain();
        a.send(broadcast("1", "2", "realtime:room", "\"0123456789\""));
        a.send(broadcast("1", "3", "realtime:room", "\"x\""));
        List<JsonNode> out = a.drain();
        assertThat(out.get(0).get(4).get("message").asText()).isEqualTo(Reasons.PROJECT_TOO_MANY_MESSAGES);
        assertThat(h.publisher.published).hasSize(1);
        a.close();
    }

    @Test
    void presenceEventsPerSecondOfTheProjectCloseTheChannelWithClientPresenceRateLimitReached() {
        limit(new ProjectLimits(null, null, null, null, null, null, 1));
        ChannelHarness.Conn a = h.connect(Vsn.V2);
        a.send(join("1", "realtime:room"));
        a.drain();
        String track = "[\"1\",\"%s\",\"realtime:room\",\"presence\",{\"type\":\"presence\",\"event\":\"track\","
                + "\"payload\":{\"n\":1}}]";
        a.send(track.formatted("2"));
        assertThat(a.next().get(4).get("response").get("reason").asText())
                .isEqualTo(Reasons.PRESENCE_UNAVAILABLE); // reached the extension
        a.send(track.formatted("3"));
        JsonNode system = a.next();
        assertThat(system.get(4).get("message").asText()).isEqualTo(Reasons.PROJECT_TOO_MANY_PRESENCE_MESSAGES);
        a.close();
    }

    @Test
    void channelsPerClientAndPayloadSizeFollowTheProjectsRow() {
        limit(new ProjectLimits(null, null, null, 1, null, 1, null));
        ChannelHarness.Conn a = h.connect(Vsn.V2);
        a.send(join("1", "realtime:one"));
        assertThat(a.next().get(4).get("status").asText()).isEqualTo("ok");
        a.send(join("2", "realtime:two"));
        assertThat(a.next().get(4).get("response").get("reason").asText()).isEqualTo(Reasons.TOO_MANY_CHANNELS);
        a.close();
        ChannelHarness.Conn b = h.connect(Vsn.V2);
        b.send("[\"1\",\"1\",\"realtime:big\",\"phx_join\",{\"config\":{\"broadcast\":{\"ack\":true}}}]");
        b.drain();
        // 1 KB = 1,024 bytes: the harness default (64 bytes) no longer applies
        b.send(broadcast("1", "2", "realtime:big", "\"" + "x".repeat(1000) + "\""));
        assertThat(b.next().get(4).get("status").asText()).isEqualTo("ok");
        b.send(broadcast("1", "3", "realtime:big", "\"" + "x".repeat(1100) + "\""));
        assertThat(b.next().get(4).get("response").get("reason").asText()).isEqualTo(Reasons.payloadTooLarge(1024));
        b.close();
    }
}
