package dev.aura.realtime.common.auth;

/**
 * A refused token. {@link #code()} is one of Supabase Realtime's error codes
 * ({@code MalformedJWT}, {@code JwtSignatureError}, {@code InvalidJWTToken}), or ours for what
 * Supabase has none: {@code InvalidAPIKey} (an unknown or revoked project API key) and
 * {@code AuthUnavailable} (the key could not be checked now: no cdc-worker answered; HTTP 503,
 * the client may try again). {@link #reason()} is the {@code "Code: message"} text the protocol
 * puts in error replies.
 */
public final class AuthException extends Exception {
    public static final String MALFORMED = "MalformedJWT";
    public static final String SIGNATURE = "JwtSignatureError";
    public static final String INVALID = "InvalidJWTToken";
    public static final String API_KEY = "InvalidAPIKey";
    public static final String UNAVAILABLE = "AuthUnavailable";

    private final String code;

    public AuthException(String code, String message) {
        super(message, null, false, false);
        this.code = code;
    }

    public String code() {
        return code;
    }

    /** Whether the credential could not be checked now (HTTP 503), rather than was refused (401). */
    public boolean unavailable() {
        return UNAVAILABLE.equals(code);
    }

    /** {@code AuthUnavailable: Could not check the key now, try again}. */
    public static AuthException unavailable(String what) {
        return new AuthException(UNAVAILABLE, "Could not check the " + what + " now, try again");
    }

    /** {@code "<code>: <message>"}, e.g. {@code InvalidJWTToken: Token has expired 12 seconds ago}. */
    public String reason() {
        return code + ": " + getMessage();
    }
}
