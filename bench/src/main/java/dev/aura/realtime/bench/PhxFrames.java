package dev.aura.realtime.bench;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The vsn 1.0.0 Phoenix frames the join figures send and the few fields they read back, written
 * as realtime-js writes them ({@code RealtimeChannel.subscribe}: broadcast, presence,
 * postgres_changes, private, then {@code postgres_changes_options} when given).
 */
final class PhxFrames {
    private static final Pattern REF = Pattern.compile("\"ref\":\"([^\"]*)\"");
    private static final Pattern ROW = Pattern.compile("row-(\\d+)");

    private PhxFrames() {}

    /**
     * A join config with one postgres_changes binding ({@code event '*'} on {@code public.<table>},
     * no filter), or none when {@code table} is null.
     *
     * @param waitMs {@code postgres_changes_options: {wait: true, timeout: waitMs}} when above 0
     */
    static String config(String table, boolean privateChannel, long waitMs) {
        String changes = table == null ? "[]" : "[{\"event\":\"*\",\"schema\":\"public\",\"table\":\"" + table + "\"}]";
        return "{\"broadcast\":{\"ack\":false,\"self\":false},\"presence\":{\"key\":\"\",\"enabled\":false},"
                + "\"postgres_changes\":" + changes + ",\"private\":" + privateChannel
                + (waitMs > 0 ? ",\"postgres_changes_options\":{\"wait\":true,\"timeout\":" + waitMs + "}" : "")
                + "}";
    }

    static String join(String topic, String config, String accessToken, String ref) {
        return "{\"topic\":\"" + topic + "\",\"event\":\"phx_join\",\"payload\":{\"config\":" + config
                + (accessToken == null ? "" : ",\"access_token\":\"" + accessToken + "\"") + "},\"ref\":\"" + ref
                + "\",\"join_ref\":\"" + ref + "\"}";
    }

    static boolean isReply(String frame) {
        return frame.contains("\"event\":\"phx_reply\"");
    }

    static boolean isOk(String frame) {
        return frame.contains("\"status\":\"ok\"");
    }

    /** A {@code system} push saying the channel's postgres_changes are live. */
    static boolean isSubscribed(String frame) {
        return frame.contains("\"event\":\"system\"") && frame.contains(JoinBench.SUBSCRIBED);
    }

    /** A {@code system} push with an error status (a binding that cannot be served). */
    static boolean isSystemError(String frame) {
        return frame.contains("\"event\":\"system\"") && frame.contains("\"status\":\"error\"");
    }

    static boolean isChange(String frame) {
        return frame.contains("\"event\":\"postgres_changes\"");
    }

    /** The frame's {@code ref}, or null when it has none. */
    static String ref(String frame) {
        Matcher m = REF.matcher(frame);
        return m.find() ? m.group(1) : null;
    }

    /** The writer's row number in a change's {@code note} ({@code row-<n>}), or -1. */
    static int row(String frame) {
        Matcher m = ROW.matcher(frame);
        return m.find() ? Integer.parseInt(m.group(1)) : -1;
    }
}
