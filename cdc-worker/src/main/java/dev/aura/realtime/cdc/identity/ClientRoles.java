package dev.aura.realtime.cdc.identity;

import java.util.List;

/**
 * The Postgres roles subscribers' checks run as (docs/design.md B, Tenancy): created NOLOGIN by
 * {@code provision.PlatformSchema}, shared by every project, the only memberships of the tenant login
 * (docs/security.md). A token's {@code role} claim maps to one of them; {@code service_role} sees
 * everything and maps to none.
 */
public final class ClientRoles {
    public static final String ANON = "aura_anon";
    public static final String AUTHENTICATED = "aura_authenticated";
    /** Every client role, the tenant login's only allowed memberships. */
    public static final List<String> ALL = List.of(ANON, AUTHENTICATED);
    /** The token role that bypasses row level security and grants. */
    public static final String SERVICE_ROLE = "service_role";

    private ClientRoles() {}

    /** The Postgres role of a token role: {@code anon}, {@code authenticated}; null for any other. */
    public static String of(String tokenRole) {
        return switch (String.valueOf(tokenRole)) {
            case "anon" -> ANON;
            case "authenticated" -> AUTHENTICATED;
            default -> null;
        };
    }
}
