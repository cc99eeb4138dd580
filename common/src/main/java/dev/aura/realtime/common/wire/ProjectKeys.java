package dev.aura.realtime.common.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;

/**
 * ws-front's questions about a project's own keys (docs/security.md "Each project's own keys"),
 * answered by any cdc-worker on {@link Subjects#PROJECT_KEYS} from {@code aura_platform}: whose is
 * this API key (by its SHA-256, never the key), and which project issues tokens with this
 * {@code iss}, with which audience and public keys.
 */
public final class ProjectKeys {
    private ProjectKeys() {}

    /**
     * One question: {@code apiKeyHash} or {@code issuer}.
     *
     * @param apiKeyHash the SHA-256 (hex) of an opaque API key
     * @param issuer a token's {@code iss}
     * @param refresh for an issuer: fetch its JWKS URL again if its rate limit allows (a token
     *     named a {@code kid} the cached set lacks)
     */
    @JsonInclude(JsonInclude.Include.NON_DEFAULT)
    public record Request(
            @JsonProperty("api_key_hash") String apiKeyHash,
            @JsonProperty("issuer") String issuer,
            @JsonProperty("refresh") boolean refresh) {
        public static Request apiKey(String hash) {
            return new Request(hash, null, false);
        }

        public static Request issuer(String issuer, boolean refresh) {
            return new Request(null, issuer, refresh);
        }
    }

    /**
     * The answer. A key: its project and role ({@code anon} or {@code service_role}), or no
     * project when it is unknown or revoked. An issuer: its project, audience and public keys
     * ({@code {"keys":[...]}}), or no project when none is configured with it; {@code error} says
     * why the keys are missing (its JWKS URL failed), never with the provider's text.
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Answer(
            @JsonProperty("project_id") String projectId,
            @JsonProperty("role") String role,
            @JsonProperty("audience") String audience,
            @JsonProperty("jwks") JsonNode jwks,
            @JsonProperty("error") String error) {
        /** No project has this key or issuer. */
        public static final Answer NONE = new Answer(null, null, null, null, null);

        public static Answer apiKey(String projectId, String role) {
            return new Answer(projectId, role, null, null, null);
        }

        public boolean found() {
            return projectId != null;
        }
    }
}
