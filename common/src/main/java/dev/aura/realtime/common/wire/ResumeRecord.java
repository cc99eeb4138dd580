package dev.aura.realtime.common.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * What ws-front keeps about one resumable channel in the KV bucket {@link #BUCKET} (issue 27,
 * docs/design.md R), under a key that hashes the project, the verified identity, the topic and
 * the bindings (ws-front's {@code resume.ResumeKeys}).
 *
 * @param subIds the registry sub ids of the channel's bindings, in binding order
 * @param lastEventId the last change event id written to the socket ({@code <LSN>:<ordinal>}), or null
 * @param owner the ws-front instance whose socket holds (or held) the channel
 * @param updatedAtMs when the record was last written
 * @param parkedAtMs when the socket closed (the entries were parked), 0 while live
 * @param windowSeconds the project's resume window when the record was written
 * @param slotEpoch the cdc-worker slot epoch seen at the last write (0 when unknown)
 * @param firstEventId the first event id written under these sub ids, or null (for {@code since})
 * @param claimsDigest the digest of the claims the channel's registry entries carry (ws-front's
 *     {@code resume.ResumeKeys#claimsDigest}): only a token of the same digest adopts the record
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ResumeRecord(
        @JsonProperty("sub_ids") List<String> subIds,
        @JsonProperty("last_event_id") String lastEventId,
        @JsonProperty("owner") String owner,
        @JsonProperty("updated_at_ms") long updatedAtMs,
        @JsonProperty("parked_at_ms") long parkedAtMs,
        @JsonProperty("window_seconds") int windowSeconds,
        @JsonProperty("slot_epoch") long slotEpoch,
        @JsonProperty("first_event_id") String firstEventId,
        @JsonProperty("claims_digest") String claimsDigest) {

    /** JetStream KV bucket of resume records (memory storage). */
    public static final String BUCKET = "aura_resume";
    /** Largest record a reader accepts. */
    public static final int MAX_BYTES = 16 * 1024;

    public ResumeRecord {
        subIds = subIds == null ? List.of() : List.copyOf(subIds);
    }

    /** Until when (epoch ms) the record may be resumed: the window after parking, or after the owner's last write. */
    public long resumableUntilMs() {
        long from = parkedAtMs > 0 ? parkedAtMs : updatedAtMs;
        return from + windowSeconds * 1000L;
    }

    public ResumeRecord withLastEventId(String id, long nowMs) {
        return new ResumeRecord(
                subIds,
                id,
                owner,
                nowMs,
                parkedAtMs,
                windowSeconds,
                slotEpoch,
                firstEventId == null ? id : firstEventId,
                claimsDigest);
    }

    public ResumeRecord parked(long nowMs) {
        return new ResumeRecord(
                subIds, lastEventId, owner, nowMs, nowMs, windowSeconds, slotEpoch, firstEventId, claimsDigest);
    }

    public ResumeRecord ownedBy(String instance, long nowMs, int window) {
        return new ResumeRecord(subIds, lastEventId, instance, nowMs, 0, window, slotEpoch, firstEventId, claimsDigest);
    }

    /** The record with the claims of a later token of the same identity (an {@code access_token}). */
    public ResumeRecord withClaimsDigest(String digest) {
        return new ResumeRecord(
                subIds, lastEventId, owner, updatedAtMs, parkedAtMs, windowSeconds, slotEpoch, firstEventId, digest);
    }
}
