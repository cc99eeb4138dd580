package dev.aura.realtime.common.wire;

import java.time.Duration;

/**
 * The per-project JetStream history of postgres changes that resume replays (issue 27,
 * docs/design.md R): one stream per opted-in project, named {@link #streamName}, holding the
 * project's {@link Subjects#changes} subjects ({@link #subjects}), bounded by the project's
 * {@code postgres_changes_history_bytes} and aged out after the resume window plus
 * {@link #AGE_MARGIN}. The cdc-worker creates, updates and deletes the streams; ws-front only reads.
 */
public final class ChangeHistory {
    /** Prefix of every history stream's name. */
    public static final String STREAM_PREFIX = "AURA_PGCHANGES_";
    /** What a stream keeps beyond the resume window. */
    public static final Duration AGE_MARGIN = Duration.ofSeconds(60);
    /** JetStream's duplicate window of the streams: a re-published batch (same message id) is stored once. */
    public static final Duration DUPLICATE_WINDOW = Duration.ofMinutes(2);

    private ChangeHistory() {}

    /** {@code AURA_PGCHANGES_<project id without dashes>}; the id's other characters are [A-Za-z0-9_]. */
    public static String streamName(String projectId) {
        StringBuilder out = new StringBuilder(STREAM_PREFIX.length() + projectId.length());
        out.append(STREAM_PREFIX);
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

    /** {@code aura.realtime.changes.<project token>.>}: exactly this project's change subjects. */
    public static String subjects(String projectId) {
        return Subjects.CHANGES + "." + Subjects.encodeToken(projectId) + ".>";
    }

    /** The stream's max age for a window of {@code resumeSeconds}. */
    public static Duration maxAge(int resumeSeconds) {
        return Duration.ofSeconds(resumeSeconds).plus(AGE_MARGIN);
    }
}
