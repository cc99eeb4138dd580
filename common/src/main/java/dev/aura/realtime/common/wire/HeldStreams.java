package dev.aura.realtime.common.wire;

/**
 * The names of each project's two JetStream streams of held changes (docs/design.md C13, C14): its
 * late lane ({@code AURA_LATE_<project>}) and its quarantine ({@code AURA_QUARANTINE_<project>}).
 * The cdc-worker creates and writes them; ws-front only reads their size for the inspector
 * (docs/design.md D9).
 */
public final class HeldStreams {
    /** Prefix of every late lane's stream name. */
    public static final String LATE_PREFIX = "AURA_LATE_";
    /** Prefix of every quarantine's stream name. */
    public static final String QUARANTINE_PREFIX = "AURA_QUARANTINE_";

    private HeldStreams() {}

    /** {@code AURA_LATE_<project id without dashes>}. */
    public static String late(String projectId) {
        return name(LATE_PREFIX, projectId);
    }

    /** {@code AURA_QUARANTINE_<project id without dashes>}. */
    public static String quarantine(String projectId) {
        return name(QUARANTINE_PREFIX, projectId);
    }

    /** The prefix and the project id with {@code -} left out and other characters outside [A-Za-z0-9_] as {@code _}. */
    static String name(String prefix, String projectId) {
        StringBuilder out = new StringBuilder(prefix.length() + projectId.length());
        out.append(prefix);
        for (int i = 0; i < projectId.length(); i++) {
            char c = projectId.charAt(i);
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_') {
                out.append(c);
            } else if (c != '-') {
                out.append('_');
            }
        }
        return out.toString();
    }
}
