package dev.aura.realtime.cdc.identity;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.Base64;
import java.util.Locale;
import java.util.UUID;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The database identity of one project (docs/design.md I): the roles under which every statement
 * that can run the project's code runs, so that code holds the project's privileges and nothing
 * more. Project {@code <uuid>} has base name {@code project_<uuid with underscores>} (44 bytes)
 * and:
 *
 * <ul>
 *   <li>{@code <base>_anon} and {@code <base>_authenticated}: NOLOGIN INHERIT roles, members of the
 *       shared {@code aura_anon} / {@code aura_authenticated} (so policies and grants written
 *       {@code to aura_anon} keep working) and the only roles with {@code USAGE} on the project's
 *       schemas;
 *   <li>a runner per role, {@code aura_rls."<base>_anon"(query, args)}: a {@code SECURITY DEFINER}
 *       function owned by that role, executable only by the shared tenant login. Inside it Postgres
 *       refuses {@code SET ROLE}, {@code RESET ROLE} and {@code set_config('role')}, and signals,
 *       password changes and reads are checked against the project role;
 *   <li>{@code <base>_login}: a LOGIN NOINHERIT role, a member of nothing, allowed to execute the
 *       project's runners, for the statements that commit (persisted broadcasts, the janitor):
 *       tenant code that runs there outside a runner (a deferred trigger at {@code COMMIT}) holds
 *       no privilege and can {@code SET ROLE} to nothing.
 * </ul>
 *
 * @param projectId the project's id, lower case
 */
public record ProjectIdentity(String projectId) {
    /** The shared client roles, as policies name them. */
    public static final String ANON = "aura_anon";

    public static final String AUTHENTICATED = "aura_authenticated";

    public ProjectIdentity {
        projectId = UUID.fromString(projectId).toString().toLowerCase(Locale.ROOT);
    }

    public static ProjectIdentity of(UUID projectId) {
        return new ProjectIdentity(projectId.toString());
    }

    /** {@code project_<uuid with underscores>}. */
    public String base() {
        return "project_" + projectId.replace('-', '_');
    }

    /** The project's role standing for the shared client role {@code clientRole} ({@link #ANON} or {@link #AUTHENTICATED}). */
    public String role(String clientRole) {
        return switch (clientRole) {
            case ANON -> base() + "_anon";
            case AUTHENTICATED -> base() + "_authenticated";
            default -> throw new IllegalArgumentException("not a client role: " + clientRole);
        };
    }

    /** The quoted name of the runner of {@code clientRole}: {@code aura_rls."<base>_anon"}. */
    public String runner(String clientRole) {
        return "aura_rls.\"" + role(clientRole) + "\"";
    }

    /** The project's login for committing statements. */
    public String login() {
        return base() + "_login";
    }

    /**
     * The password of a project login: {@link #derivedPassword} with purpose
     * {@code "aura-realtime project login v1"}, so every replica computes the same one and a
     * repaired login is usable by all of them.
     */
    public static String password(String sharedSecret, String login) {
        return derivedPassword(sharedSecret, "aura-realtime project login v1", login);
    }

    /**
     * A login's password derived from the secret all replicas share: base64url of
     * HMAC-SHA256({@code sharedSecret}, {@code purpose} NUL {@code login}). The one derivation of
     * both the tenant login's and the project logins' passwords.
     */
    public static String derivedPassword(String sharedSecret, String purpose, String login) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(sharedSecret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            byte[] digest = mac.doFinal((purpose + "\u0000" + login).getBytes(StandardCharsets.UTF_8));
            return Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
        }
    }
}
