package dev.aura.realtime.front.protocol;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** Response bodies of {@code phx_reply}. */
public final class Replies {
    private Replies() {}

    /** {@code {"reason": reason}}, the response of an error reply. */
    public static ObjectNode reason(String reason) {
        ObjectNode node = JsonNodeFactory.instance.objectNode();
        node.put("reason", reason);
        return node;
    }

    /** {@code {}}. */
    public static ObjectNode empty() {
        return JsonNodeFactory.instance.objectNode();
    }
}
