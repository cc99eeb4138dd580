package dev.aura.realtime.front.presence;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * One tracked presence (one channel membership's latest {@code track}), the JSON value of its
 * {@code aura_presence} key.
 *
 * @param projectId the tracker's project
 * @param channel channel name without {@code realtime:}
 * @param key the presence key ({@code config.presence.key}, or generated per membership)
 * @param member unique id of the tracking membership (stable across re-tracks)
 * @param ref this track's {@code phx_ref}; a new one for every track
 * @param refPrev the {@code phx_ref} this track replaced, or null for a first track
 * @param meta the client's track payload (a JSON object)
 * @param instance the ws-front instance that owns (and refreshes) the entry
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record PresenceEntry(
        @JsonProperty("project") String projectId,
        @JsonProperty("topic") String channel,
        @JsonProperty("key") String key,
        @JsonProperty("member") String member,
        @JsonProperty("phx_ref") String ref,
        @JsonProperty("phx_ref_prev") String refPrev,
        @JsonProperty("meta") JsonNode meta,
        @JsonProperty("instance") String instance) {

    /** This entry's bucket key. */
    public String kvKey() {
        return PresenceKeys.of(projectId, channel, key, member);
    }

    /**
     * The meta as clients see it: the payload's fields, then {@code phx_ref} and (after a
     * re-track) {@code phx_ref_prev}, which win over payload fields of the same name.
     */
    public ObjectNode wireMeta() {
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        if (meta != null && meta.isObject()) {
            out.setAll((ObjectNode) meta);
        }
        out.put("phx_ref", ref);
        if (refPrev != null) {
            out.put("phx_ref_prev", refPrev);
        } else {
            out.remove("phx_ref_prev");
        }
        return out;
    }

    /** Same presence as {@code other} for listeners: same ref and payload. */
    boolean sameAs(PresenceEntry other) {
        return other != null && ref.equals(other.ref) && java.util.Objects.equals(meta, other.meta);
    }
}
