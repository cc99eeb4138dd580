package dev.aura.realtime.front.presence;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The pending {@code presence_diff} of one channel: joined and left metas by presence key and
 * {@code phx_ref}. Not thread-safe (owned by the view thread).
 *
 * <p>Invariant: listeners received every change before this batch, none of it. So a meta that
 * joins and leaves within the batch is dropped from both sides (nobody saw it), while a re-track
 * of a meta listeners know stays a join of the new ref plus a leave of the old one, which
 * Phoenix's {@code syncDiff} applies joins-first (phoenix/assets/js/phoenix/presence.js
 * {@code syncDiff}: joins keep the current metas whose refs differ, then leaves drop by ref).
 */
final class PresenceDiff {
    private final Map<String, Map<String, ObjectNode>> joins = new LinkedHashMap<>();
    private final Map<String, Map<String, ObjectNode>> leaves = new LinkedHashMap<>();

    void join(String key, ObjectNode meta) {
        joins.computeIfAbsent(key, k -> new LinkedHashMap<>())
                .put(meta.path("phx_ref").asText(), meta);
    }

    void leave(String key, ObjectNode meta) {
        String ref = meta.path("phx_ref").asText();
        Map<String, ObjectNode> joined = joins.get(key);
        if (joined != null && joined.remove(ref) != null) {
            if (joined.isEmpty()) {
                joins.remove(key);
            }
            return;
        }
        leaves.computeIfAbsent(key, k -> new LinkedHashMap<>()).put(ref, meta);
    }

    boolean isEmpty() {
        return joins.isEmpty() && leaves.isEmpty();
    }

    /** {@code {"joins": {key: {"metas": [..]}}, "leaves": {..}}}. */
    ObjectNode toJson() {
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        out.set("joins", side(joins));
        out.set("leaves", side(leaves));
        return out;
    }

    private static ObjectNode side(Map<String, Map<String, ObjectNode>> byKey) {
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        byKey.forEach((key, metas) -> {
            ArrayNode list = out.putObject(key).putArray("metas");
            metas.values().forEach(list::add);
        });
        return out;
    }
}
