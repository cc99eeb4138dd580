package dev.aura.realtime.front.protocol;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** Payloads of {@code system} pushes: {@code {"extension","status","message","channel"}}. */
public final class SystemMessages {
    public static final String EXT_POSTGRES = "postgres_changes";
    public static final String EXT_SYSTEM = "system";

    private SystemMessages() {}

    public static ObjectNode payload(String extension, String status, String message, String channel) {
        ObjectNode node = JsonNodeFactory.instance.objectNode();
        node.put("extension", extension);
        node.put("status", status);
        node.put("message", message);
        node.put("channel", channel);
        return node;
    }

    public static ObjectNode error(String extension, String message, String channel) {
        return payload(extension, "error", message, channel);
    }

    public static ObjectNode ok(String extension, String message, String channel) {
        return payload(extension, "ok", message, channel);
    }

    /**
     * postgres_changes resume was not possible (docs/protocol.md): status {@code ok} (realtime-js
     * hands it to {@code .on('system', ...)} without erroring the channel), {@code code}
     * {@code ResumeNotPossible} and the reason; the client refetches.
     */
    public static ObjectNode resumeNotPossible(String reason, String channel) {
        ObjectNode node = payload(EXT_POSTGRES, "ok", "resume not possible: refetch", channel);
        node.put("code", "ResumeNotPossible");
        node.put("reason", reason);
        return node;
    }
}
