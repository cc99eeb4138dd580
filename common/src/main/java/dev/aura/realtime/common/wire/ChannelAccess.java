package dev.aura.realtime.common.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;

/**
 * Request/reply on {@link Subjects#CHANNEL_ACCESS}: ws-front asks a cdc-worker (queue group, any
 * replica) everything about private channels that needs the project's database (docs/design.md
 * H1, H2): the read check of a private join, the write check of the first broadcast or track, a
 * replay from the project's messages table, a persisted broadcast, and the project's
 * {@code private_only} setting. Every statement that evaluates tenant policies runs on the
 * worker's unprivileged tenant pool under the subscriber's role and claims, with
 * {@code realtime.topic()} set to {@code topic}.
 */
public final class ChannelAccess {
    /** Project settings only ({@code private_only}); no tenant SQL. */
    public static final String OP_SETTINGS = "settings";
    /** Read check: which of broadcast and presence the role may read on the topic. */
    public static final String OP_READ = "read";
    /** Write check of one extension ({@code extension}): the messages table's insert policy. */
    public static final String OP_WRITE = "write";
    /** Persisted messages of the topic since {@code since_ms}, the newest {@code limit}. */
    public static final String OP_REPLAY = "replay";
    /** Inserts one broadcast into the messages table under the role (insert policy applies). */
    public static final String OP_PERSIST = "persist";
    /**
     * {@link #OP_PERSIST} of a binary broadcast ({@code binary_payload}); an op of its own so a
     * cdc-worker that predates binary messages refuses it rather than storing an empty payload.
     */
    public static final String OP_PERSIST_BINARY = "persist_binary";

    /** Most messages one replay returns (Supabase's cap as well). */
    public static final int MAX_REPLAY_LIMIT = 25;
    /**
     * Most payload bytes one replay reply carries: NATS limits a message to 1 MiB by default;
     * older messages beyond it are left out and the reply says {@code truncated}.
     */
    public static final int MAX_REPLAY_BYTES = 768 * 1024;

    private ChannelAccess() {}

    /**
     * @param op one of the {@code OP_} constants
     * @param projectId the token's project
     * @param topic the channel name without {@code realtime:}
     * @param role the token's {@code role} claim
     * @param claims the token's claims as JSON text ({@code request.jwt.claims})
     * @param extension {@code broadcast} or {@code presence} ({@link #OP_WRITE})
     * @param event broadcast event ({@link #OP_PERSIST})
     * @param payload broadcast payload, a JSON value ({@link #OP_PERSIST})
     * @param sinceMs epoch ms ({@link #OP_REPLAY})
     * @param limit at most this many, capped at {@link #MAX_REPLAY_LIMIT} ({@link #OP_REPLAY})
     * @param binaryPayload a binary broadcast's bytes instead of {@code payload} ({@link #OP_PERSIST_BINARY})
     * @param ttlMs the message expires this long after it is stored, at most the retention; 0 for
     *     the retention ({@link #OP_PERSIST}, {@link #OP_PERSIST_BINARY}, {@code persist: {ttl}}). An
     *     older worker ignores it
     */
    public record Request(
            @JsonProperty("op") String op,
            @JsonProperty("project_id") String projectId,
            @JsonProperty("topic") String topic,
            @JsonProperty("role") String role,
            @JsonProperty("claims") String claims,
            @JsonProperty("extension") String extension,
            @JsonProperty("event") String event,
            @JsonProperty("payload") JsonNode payload,
            @JsonProperty("since_ms") long sinceMs,
            @JsonProperty("limit") int limit,

            @JsonProperty("binary_payload") @JsonInclude(JsonInclude.Include.NON_NULL)
            byte[] binaryPayload,

            @JsonProperty("ttl_ms") long ttlMs) {

        public static Request settings(String projectId) {
            return new Request(OP_SETTINGS, projectId, null, null, null, null, null, null, 0, 0, null, 0);
        }

        public static Request read(String projectId, String topic, String role, String claims) {
            return new Request(OP_READ, projectId, topic, role, claims, null, null, null, 0, 0, null, 0);
        }

        public static Request write(String projectId, String topic, String role, String claims, String extension) {
            return new Request(OP_WRITE, projectId, topic, role, claims, extension, null, null, 0, 0, null, 0);
        }

        public static Request replay(
                String projectId, String topic, String role, String claims, long sinceMs, int limit) {
            return new Request(OP_REPLAY, projectId, topic, role, claims, null, null, null, sinceMs, limit, null, 0);
        }

        public static Request persist(
                String projectId, String topic, String role, String claims, String event, JsonNode payload) {
            return persist(projectId, topic, role, claims, event, payload, 0);
        }

        /** A persisted broadcast expiring {@code ttlMs} after it is stored (0: the retention applies). */
        public static Request persist(
                String projectId,
                String topic,
                String role,
                String claims,
                String event,
                JsonNode payload,
                long ttlMs) {
            return new Request(
                    OP_PERSIST, projectId, topic, role, claims, "broadcast", event, payload, 0, 0, null, ttlMs);
        }

        /** {@link #OP_PERSIST_BINARY}: a binary broadcast stored in {@code binary_payload}. */
        public static Request persistBinary(
                String projectId, String topic, String role, String claims, String event, byte[] payload) {
            return persistBinary(projectId, topic, role, claims, event, payload, 0);
        }

        /** {@link #persistBinary(String, String, String, String, String, byte[])} expiring {@code ttlMs} after it is stored. */
        public static Request persistBinary(
                String projectId, String topic, String role, String claims, String event, byte[] payload, long ttlMs) {
            return new Request(
                    OP_PERSIST_BINARY, projectId, topic, role, claims, "broadcast", event, null, 0, 0, payload, ttlMs);
        }
    }

    /**
     * One persisted message as replay returns it.
     *
     * @param id the row's {@code id} (sent to clients as {@code meta.id})
     * @param event its {@code event}
     * @param payload its {@code payload}
     * @param insertedAtMs its {@code inserted_at} in epoch ms
     * @param binaryPayload its {@code binary_payload} (base64 on the wire), or null for JSON
     */
    public record Message(
            @JsonProperty("id") String id,
            @JsonProperty("event") String event,
            @JsonProperty("payload") JsonNode payload,
            @JsonProperty("inserted_at_ms") long insertedAtMs,

            @JsonProperty("binary_payload") @JsonInclude(JsonInclude.Include.NON_NULL)
            byte[] binaryPayload) {

        /** A message with a JSON payload. */
        public Message(String id, String event, JsonNode payload, long insertedAtMs) {
            this(id, event, payload, insertedAtMs, null);
        }
    }

    /**
     * The answer. {@code error} (a Supabase-style {@code "Code: message"}) is set when the worker
     * could not decide (which the asker treats as a denial) or refused the request.
     *
     * @param privateOnly the project refuses public channels
     * @param readBroadcast the role may read broadcasts of the topic ({@link #OP_READ})
     * @param readPresence the role may read presence of the topic ({@link #OP_READ})
     * @param write the insert policy allowed the write ({@link #OP_WRITE}, {@link #OP_PERSIST})
     * @param id the persisted row's id ({@link #OP_PERSIST})
     * @param messages oldest first, in commit order ({@link #OP_REPLAY})
     * @param truncated older messages were left out to stay within {@link #MAX_REPLAY_BYTES}
     */
    public record Reply(
            @JsonProperty("error") String error,
            @JsonProperty("private_only") boolean privateOnly,
            @JsonProperty("read_broadcast") boolean readBroadcast,
            @JsonProperty("read_presence") boolean readPresence,
            @JsonProperty("write") boolean write,
            @JsonProperty("id") String id,
            @JsonProperty("messages") List<Message> messages,
            @JsonProperty("truncated") boolean truncated) {

        /** The worker could not decide or refused the request (the asker denies). */
        public static Reply failed(String error) {
            return new Reply(error, false, false, false, false, null, List.of(), false);
        }

        /** {@link #OP_SETTINGS}: the project's setting only. */
        public static Reply settings(boolean privateOnly) {
            return new Reply(null, privateOnly, false, false, false, null, List.of(), false);
        }

        /** {@link #OP_READ}: what the role may read on the topic. */
        public static Reply read(boolean privateOnly, boolean readBroadcast, boolean readPresence) {
            return new Reply(null, privateOnly, readBroadcast, readPresence, false, null, List.of(), false);
        }

        /** {@link #OP_WRITE}: whether the insert policy allowed the write. */
        public static Reply write(boolean privateOnly, boolean allowed) {
            return new Reply(null, privateOnly, false, false, allowed, null, List.of(), false);
        }

        /** {@link #OP_PERSIST}: stored as row {@code id}. */
        public static Reply persisted(boolean privateOnly, String id) {
            return new Reply(null, privateOnly, false, false, true, id, List.of(), false);
        }

        /** {@link #OP_PERSIST}: refused with {@code error} (the insert policy denied it). */
        public static Reply notPersisted(boolean privateOnly, String error) {
            return new Reply(error, privateOnly, false, false, false, null, List.of(), false);
        }

        /** {@link #OP_REPLAY}: the messages, oldest first. */
        public static Reply replayed(boolean privateOnly, List<Message> messages, boolean truncated) {
            return new Reply(null, privateOnly, false, false, false, null, List.copyOf(messages), truncated);
        }
    }
}
