package dev.aura.realtime.cdc.tenant;

/**
 * Whether tenant SQL runs, as {@code /health} shows it ({@code tenant_sql}; docs/security.md).
 * When it is {@link #off} (a privileged or missing login), RLS checks and filter casts are not run
 * at all (never on another login): subscribers of tables with row level security are denied
 * INSERT and UPDATE, and filters cannot be validated at join. A login that cannot connect is an
 * outage, not a decision: checks are tried and fail their batch until it connects again.
 *
 * @param usable whether RLS checks and casts run
 * @param login the tenant login's name (as configured or provisioned)
 * @param reasonCode why not (snake_case, an API like {@code /health}'s {@code reason_code}), or null
 * @param reason details for operators (never tenant text), or null
 */
public record TenantSqlStatus(boolean usable, String login, String reasonCode, String reason) {
    /** {@code /health} reason codes of {@code tenant_sql}. */
    public static final String STARTING = "starting";
    /** The login is superuser, has BYPASSRLS, CREATEROLE or REPLICATION, a membership beyond the client roles, or owns objects. */
    public static final String PRIVILEGED = "tenant_login_privileged";
    /** No POSTGRES_TENANT_URL and the platform login may not provision the login. */
    public static final String MISSING = "tenant_login_missing";
    /** The login cannot connect (credentials, pg_hba, Postgres down). */
    public static final String UNAVAILABLE = "tenant_login_unavailable";

    /**
     * Whether tenant SQL is off on purpose (a privileged or missing login), so checks are denied;
     * otherwise a check is tried and a login that cannot connect fails the batch, which is re-read.
     */
    public boolean off() {
        return PRIVILEGED.equals(reasonCode) || MISSING.equals(reasonCode);
    }

    static TenantSqlStatus ok(String login) {
        return new TenantSqlStatus(true, login, null, null);
    }

    static TenantSqlStatus not(String login, String code, String reason) {
        return new TenantSqlStatus(false, login, code, reason);
    }
}
