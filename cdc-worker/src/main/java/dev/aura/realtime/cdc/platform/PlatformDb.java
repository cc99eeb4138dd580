package dev.aura.realtime.cdc.platform;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * The worker's privileged Postgres pool ({@code POSTGRES_URL}) for <em>platform SQL</em>: the
 * {@code aura_platform} tables, the bootstrap DDL, and catalog reads ({@code pg_type},
 * {@code pg_class}, {@code pg_attribute}). Statements that evaluate tenant-authored SQL (RLS
 * policies, casts to tenant types) never run here but on {@code tenant.TenantDb}.
 *
 * <p>Only classes of this package open connections on it, so every platform statement is in
 * this package.
 */
public final class PlatformDb {
    private final DataSource pool;

    public PlatformDb(DataSource pool) {
        this.pool = pool;
    }

    Connection connection() throws SQLException {
        return pool.getConnection();
    }
}
