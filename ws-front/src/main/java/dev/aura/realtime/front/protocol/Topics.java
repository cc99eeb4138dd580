package dev.aura.realtime.front.protocol;

import java.nio.charset.StandardCharsets;

/**
 * Topic naming: channels are {@code realtime:<name>} with a non-empty name of at most
 * {@link #MAX_NAME_BYTES} UTF-8 bytes. The name is part of NATS subjects, registry and presence
 * keys and history keys, so its length bounds what one join can make the servers hold.
 */
public final class Topics {
    public static final String PREFIX = "realtime:";

    /** Longest channel name (the topic without {@code realtime:}), in UTF-8 bytes. */
    public static final int MAX_NAME_BYTES = 255;

    private Topics() {}

    /** True when {@code topic} is {@code realtime:<something>}. */
    public static boolean isChannel(String topic) {
        return topic.startsWith(PREFIX) && topic.length() > PREFIX.length();
    }

    /** True when the name of channel {@code topic} is longer than {@link #MAX_NAME_BYTES} UTF-8 bytes. */
    public static boolean nameTooLong(String topic) {
        int chars = topic.length() - PREFIX.length();
        // a char is at most 3 UTF-8 bytes (a surrogate pair is 4 for 2 chars): skip the encoding when short
        return chars * 3 > MAX_NAME_BYTES
                && topic.substring(PREFIX.length()).getBytes(StandardCharsets.UTF_8).length > MAX_NAME_BYTES;
    }

    /**
     * Why {@code topic} cannot be joined, or null: not {@code realtime:}, no name, a name too long,
     * or a NUL (reserved for private channel keys).
     */
    public static String joinRefusal(String topic) {
        if (!topic.startsWith(PREFIX)) {
            return Reasons.UNMATCHED_TOPIC;
        }
        if (!isChannel(topic)) {
            return Reasons.TOPIC_NAME_REQUIRED;
        }
        if (nameTooLong(topic)) {
            return Reasons.TOPIC_TOO_LONG;
        }
        if (topic.indexOf('\u0000') >= 0) {
            return Reasons.TOPIC_NAME_INVALID;
        }
        return null;
    }
}
