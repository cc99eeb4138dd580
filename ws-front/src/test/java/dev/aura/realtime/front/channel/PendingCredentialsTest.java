package dev.aura.realtime.front.channel;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.common.auth.ApiKeys;
import dev.aura.realtime.common.wire.ProjectKeys;
import dev.aura.realtime.front.protocol.Reasons;
import dev.aura.realtime.front.protocol.Vsn;
import dev.aura.realtime.front.testing.ChannelHarness;
import dev.aura.realtime.front.testing.FrontFixture;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A join's or an {@code access_token} push's credential that must be asked of a cdc-worker (a
 * project API key not known yet, docs/security.md "Each project's own keys"): the connection's
 * later events wait for the answer, in order, with reads paused; the refusals after it.
 */
class PendingCredentialsTest {
    private static final String OTHER = "0b5a6a2e-2a6d-4a49-8f4c-1d6e5a1c9f00";

    private final ChannelHarness h = new ChannelHarness();
    private final List<CompletableFuture<ProjectKeys.Answer>> asked = new CopyOnWriteArrayList<>();

    @BeforeEach
    void aWorkerThatAnswersLater() {
        h.projectKeys = r -> {
            CompletableFuture<ProjectKeys.Answer> f = new CompletableFuture<>();
            asked.add(f);
            return f;
        };
    }

    private static String join(String ref, String topic, String accessToken) {
        return "[\"" + ref + "\",\"" + ref + "\",\"" + topic + "\",\"phx_join\",{\"config\":{},\"access_token\":\""
                + accessToken + "\"}]";
    }

    private static String reason(JsonNode reply) {
        return reply.get(4).path("response").path("reason").asText();
    }

    @Test
    void theEventsAfterAJoinWaitForItsKeysAnswerInOrder() {
        ChannelHarness.Conn c = h.connect(Vsn.V2);
        c.send(join("1", "realtime:a", ApiKeys.generate(ApiKeys.Kind.PUBLISHABLE)));
        c.send("[null,\"7\",\"phoenix\",\"heartbeat\",{}]");
        c.send("[\"8\",\"8\",\"realtime:b\",\"phx_join\",{\"config\":{}}]");
        assertThat(c.next()).as("nothing is answered before the key's").isNull();
        assertThat(c.ch.config().isAutoRead())
                .as("reads paused while the key is asked about")
                .isFalse();
        assertThat(asked).hasSize(1);

        asked.get(0).complete(ProjectKeys.Answer.apiKey(FrontFixture.PROJECT, "anon"));
        List<JsonNode> frames = c.drain();
        // handled in order; a join's reply follows its checks on a later turn of the loop, as always
        assertThat(frames).extracting(f -> f.get(1).asText()).containsExactlyInAnyOrder("1", "7", "8");
        assertThat(frames)
                .allSatisfy(f -> assertThat(f.get(4).path("status").asText()).isEqualTo("ok"));
        assertThat(c.ch.config().isAutoRead()).isTrue();
        c.close();
    }

    @Test
    void anotherProjectsKeyAnUnknownKeyAndNoAnswerAreRefusedOnceAnswered() {
        ChannelHarness.Conn c = h.connect(Vsn.V2);
        c.send(join("1", "realtime:a", ApiKeys.generate(ApiKeys.Kind.SECRET)));
        asked.get(0).complete(ProjectKeys.Answer.apiKey(OTHER, "service_role"));
        assertThat(reason(c.next())).isEqualTo(Reasons.PROJECT_MISMATCH);

        c.send(join("2", "realtime:b", ApiKeys.generate(ApiKeys.Kind.PUBLISHABLE)));
        asked.get(1).complete(ProjectKeys.Answer.NONE);
        assertThat(reason(c.next())).isEqualTo("InvalidAPIKey: Invalid API key: it is unknown or was revoked");

        c.send(join("3", "realtime:c", ApiKeys.generate(ApiKeys.Kind.PUBLISHABLE)));
        asked.get(2).completeExceptionally(new IllegalStateException("no responders"));
        assertThat(reason(c.next())).isEqualTo("AuthUnavailable: Could not check the API key now, try again");
        assertThat(h.metrics.channels()).isZero();
        c.close();
    }

    @Test
    void anAccessTokenPushOfAnotherProjectsKeyClosesTheChannelOnceAnswered() {
        ChannelHarness.Conn c = h.connect(Vsn.V2);
        c.send("[\"1\",\"1\",\"realtime:a\",\"phx_join\",{\"config\":{}}]");
        c.drain();
        c.send("[\"1\",\"2\",\"realtime:a\",\"access_token\",{\"access_token\":\""
                + ApiKeys.generate(ApiKeys.Kind.SECRET) + "\"}]");
        c.send("[null,\"9\",\"phoenix\",\"heartbeat\",{}]");
        assertThat(c.next()).isNull();
        asked.get(0).complete(ProjectKeys.Answer.apiKey(OTHER, "service_role"));
        List<JsonNode> frames = c.drain();
        assertThat(frames).extracting(f -> f.get(3).asText()).containsExactly("system", "phx_close", "phx_reply");
        assertThat(frames.get(0).get(4).path("message").asText()).isEqualTo(Reasons.PROJECT_MISMATCH);
        c.close();
    }

    @Test
    void aConnectionClosedWhileItsKeyIsAskedAboutJoinsNothing() {
        ChannelHarness.Conn c = h.connect(Vsn.V2);
        c.send(join("1", "realtime:a", ApiKeys.generate(ApiKeys.Kind.PUBLISHABLE)));
        c.ch.close();
        asked.get(0).complete(ProjectKeys.Answer.apiKey(FrontFixture.PROJECT, "anon"));
        c.ch.runPendingTasks();
        assertThat(h.metrics.channels()).isZero();
        assertThat(h.sessions.size()).isZero();
        c.close();
    }
}
