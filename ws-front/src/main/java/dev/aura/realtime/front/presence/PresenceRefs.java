package dev.aura.realtime.front.presence;

import java.util.Base64;
import java.util.concurrent.ThreadLocalRandom;

/** {@code phx_ref} values: 96 random bits, URL-safe base64 (16 characters). Any thread. */
final class PresenceRefs {
    private PresenceRefs() {}

    static String next() {
        byte[] bytes = new byte[12];
        ThreadLocalRandom.current().nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }
}
