package dev.aura.realtime.front.protocol;

/** Topic naming: channels are {@code realtime:<name>} with a non-empty name. */
public final class Topics {
    public static final String PREFIX = "realtime:";

    private Topics() {}

    /** True when {@code topic} is {@code realtime:<something>}. */
    public static boolean isChannel(String topic) {
        return topic.startsWith(PREFIX) && topic.length() > PREFIX.length();
    }
}
