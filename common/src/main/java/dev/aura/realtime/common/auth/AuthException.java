package dev.aura.realtime.common.auth;

/**
 * A refused token. {@link #code()} is one of Supabase Realtime's error codes
 * ({@code MalformedJWT}, {@code JwtSignatureError}, {@code InvalidJWTToken}); {@link #reason()}
 * is the {@code "Code: message"} text the protocol puts in error replies.
 */
public final class AuthException extends Exception {
    public static final String MALFORMED = "MalformedJWT";
    public static final String SIGNATURE = "JwtSignatureError";
    public static final String INVALID = "InvalidJWTToken";

    private final String code;

    public AuthException(String code, String message) {
        super(message, null, false, false);
        this.code = code;
    }

    public String code() {
        return code;
    }

    /** {@code "<code>: <message>"}, e.g. {@code InvalidJWTToken: Token has expired 12 seconds ago}. */
    public String reason() {
        return code + ": " + getMessage();
    }
}
