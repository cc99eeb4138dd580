package dev.aura.realtime.front.protocol;

/**
 * How the server frames of one connection are written: Phoenix JSON of a serializer
 * {@link Vsn} over WebSocket, or the {@code text/event-stream} events of the SSE endpoint. The
 * fan-out encodes each shared frame once per framing in use.
 */
public enum Framing {
    /** vsn 1.0.0 over WebSocket: JSON object text frames. */
    V1("1.0.0"),
    /** vsn 2.0.0 over WebSocket: JSON array text frames and binary user broadcasts (kind 4). */
    V2("2.0.0"),
    /** One channel as SSE events ({@link SseEvents}); only JSON payloads have a form here. */
    SSE("sse");

    private final String label;

    Framing(String label) {
        this.label = label;
    }

    /** The WebSocket framing of a serializer version. */
    public static Framing of(Vsn vsn) {
        return vsn == Vsn.V2 ? V2 : V1;
    }

    /** {@code 1.0.0}, {@code 2.0.0} or {@code sse}, for logs. */
    public String label() {
        return label;
    }
}
