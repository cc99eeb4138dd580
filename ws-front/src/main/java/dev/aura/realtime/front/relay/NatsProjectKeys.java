package dev.aura.realtime.front.relay;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.wire.ProjectKeys;
import dev.aura.realtime.common.wire.Subjects;
import io.nats.client.Connection;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * Asks a cdc-worker about a project's API key or token issuer on {@link Subjects#PROJECT_KEYS}
 * (request/reply; any worker answers from {@code aura_platform}), waiting at most
 * {@code PROJECT_KEYS_TIMEOUT_MS}. Caching is the caller's ({@code auth.ProjectKeyAnswers}).
 * Thread-safe.
 */
public final class NatsProjectKeys implements ProjectKeysSource {
    private final Connection connection;
    private final ObjectMapper mapper;
    private final Duration timeout;

    public NatsProjectKeys(Connection connection, ObjectMapper mapper, Duration timeout) {
        this.connection = connection;
        this.mapper = mapper;
        this.timeout = timeout;
    }

    @Override
    public CompletableFuture<ProjectKeys.Answer> ask(ProjectKeys.Request request) {
        try {
            return connection
                    .requestWithTimeout(Subjects.PROJECT_KEYS, mapper.writeValueAsBytes(request), timeout)
                    .thenApply(msg -> {
                        try {
                            return mapper.readValue(msg.getData(), ProjectKeys.Answer.class);
                        } catch (IOException e) {
                            throw new IllegalStateException("undecodable project keys answer", e);
                        }
                    });
        } catch (IOException | RuntimeException e) { // a closed or never-connected connection
            return CompletableFuture.failedFuture(e);
        }
    }
}
