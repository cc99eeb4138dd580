package dev.aura.realtime.cdc.config;

import dev.aura.realtime.cdc.identity.ProjectIdentity;
import java.time.Duration;

/**
 * How the worker reaches Postgres for <em>tenant SQL</em>, the statements that evaluate SQL a
 * tenant wrote (docs/security.md): either an operator-given login ({@code POSTGRES_TENANT_URL})
 * or a login the worker provisions itself from its platform login.
 *
 * <p>A provisioned login is named after the slot ({@link #loginFor}), so every replica of one
 * release (one slot) uses the same login and a second release on the same cluster gets its own.
 * Its password is derived from the secret all replicas already share ({@code AURA_JWT_SECRET},
 * {@link #passwordFor}): each replica sets the same password at start, so a replica starting
 * never breaks the pools of replicas already running. A fresh random password per start would:
 * the last replica to start would lock the others out.
 *
 * @param url JDBC URL of the tenant login: {@code POSTGRES_TENANT_URL}, or {@code POSTGRES_URL}
 *     (host and database only; the user and password below replace its credentials) when provisioned
 * @param provisionedLogin the login the worker creates or corrects at start, or null when
 *     {@code POSTGRES_TENANT_URL} names the login
 * @param provisionedPassword the derived password of {@code provisionedLogin}, or null
 * @param statementTimeout {@code statement_timeout} of every tenant statement
 * @param lockTimeout {@code lock_timeout} of every tenant statement
 */
public record TenantSqlConfig(
        String url,
        String provisionedLogin,
        String provisionedPassword,
        Duration statementTimeout,
        Duration lockTimeout) {

    /** Longest role name Postgres keeps (NAMEDATALEN - 1 bytes); longer names are truncated. */
    private static final int MAX_ROLE_NAME_BYTES = 63;

    private static final String SUFFIX = "_tenant";

    /** Whether the worker provisions the login itself (no {@code POSTGRES_TENANT_URL}). */
    public boolean provisioned() {
        return provisionedLogin != null;
    }

    /** The provisioned login of a slot: {@code <slot>_tenant}, the slot name cut so it fits 63 bytes. */
    public static String loginFor(String slotName) {
        int keep = Math.min(slotName.length(), MAX_ROLE_NAME_BYTES - SUFFIX.length());
        return slotName.substring(0, keep) + SUFFIX; // slot names are ASCII ([a-z0-9_])
    }

    /**
     * The password of a provisioned login: HMAC-SHA256 of the login name under the shared secret,
     * base64url. Whoever knows the secret can compute it, but that secret already mints
     * {@code service_role} tokens of every project, which see more than this login can.
     */
    public static String passwordFor(String sharedSecret, String login) {
        return ProjectIdentity.derivedPassword(sharedSecret, "aura-realtime tenant login v1", login);
    }

    /** Never prints the URL (it may carry a password) nor the password. */
    @Override
    public String toString() {
        return "TenantSqlConfig[provisionedLogin=" + provisionedLogin + ", statementTimeout=" + statementTimeout
                + ", lockTimeout=" + lockTimeout + "]";
    }
}
