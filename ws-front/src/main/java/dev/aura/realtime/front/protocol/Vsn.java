package dev.aura.realtime.front.protocol;

/**
 * Phoenix serializer versions realtime-js speaks, chosen by the {@code vsn} query parameter.
 * {@link #V1} frames are JSON objects; {@link #V2} frames are JSON arrays
 * {@code [join_ref, ref, topic, event, payload]} plus binary user broadcasts (kinds 3 and 4).
 */
public enum Vsn {
    V1("1.0.0"),
    V2("2.0.0");

    private final String wire;

    Vsn(String wire) {
        this.wire = wire;
    }

    /**
     * @param value the {@code vsn} query parameter; null (absent) means {@code 1.0.0}, as in Phoenix
     * @return the version, or null when unsupported
     */
    public static Vsn fromQuery(String value) {
        if (value == null || value.isEmpty()) {
            return V1;
        }
        for (Vsn v : values()) {
            if (v.wire.equals(value)) {
                return v;
            }
        }
        return null;
    }
}
