package dev.aura.realtime.cdc.failure;

/**
 * Why one change could not be delivered as it is (docs/design.md C13): the closed list of the
 * quarantine's {@code fault} codes. Each fault is its project's alone: the change is kept in the
 * project's quarantine, its subscribers get {@link #clientError()} in Supabase's shape, and the slot
 * moves on. Only infrastructure failures ({@link CdcFailure}) make a batch be read again.
 */
public enum RowFault {
    /**
     * Something about the change is larger than what the pipeline carries: a message over NATS's
     * {@code max_payload} even when cut, a topic too long for a NATS subject, a JSON value nested
     * deeper than {@code WireJson.MAX_VALUE_NESTING}.
     */
    TOO_LARGE("too_large", "Error 413: Payload Too Large"),
    /** A value the pipeline cannot render or read (an encoding wal2json or Jackson refuses, a malformed row). */
    UNPROCESSABLE("unprocessable", "Error 422: Unprocessable Entity"),
    /** The project's late lane was full (docs/design.md C14): its checks fell too far behind. */
    CHECK_BACKLOG_FULL("check_backlog_full", "Error 503: Service Unavailable"),
    /** Even alone and with the late lane's time, the change's RLS check did not finish. */
    CHECK_TIMED_OUT("check_timed_out", "Error 504: Gateway Timeout"),
    /** A bug of ours met while processing the change. */
    INTERNAL("internal", "Error 500: Internal Server Error");

    private final String code;
    private final String clientError;

    RowFault(String code, String clientError) {
        this.code = code;
        this.clientError = clientError;
    }

    /** The snake_case code of the quarantine, the metrics and the log line. */
    public String code() {
        return code;
    }

    /** What the change's subscribers read in the payload's {@code errors} (or a message's {@code error}). */
    public String clientError() {
        return clientError;
    }

    /** The fault of a code, or {@link #INTERNAL} for an unknown one. */
    public static RowFault ofCode(String code) {
        for (RowFault f : values()) {
            if (f.code.equals(code)) {
                return f;
            }
        }
        return INTERNAL;
    }
}
