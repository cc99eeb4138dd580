package dev.aura.realtime.front.relay;

import dev.aura.realtime.common.wire.ProjectKeys;
import java.util.concurrent.CompletableFuture;

/**
 * Where the answers about projects' own keys come from (a cdc-worker, through the relay;
 * docs/security.md "Each project's own keys"). The future fails when no answer came in time.
 */
public interface ProjectKeysSource {
    CompletableFuture<ProjectKeys.Answer> ask(ProjectKeys.Request request);

    /** No project has any key or issuer of its own (tests, and replicas without NATS). */
    ProjectKeysSource NONE = request -> CompletableFuture.completedFuture(ProjectKeys.Answer.NONE);
}
