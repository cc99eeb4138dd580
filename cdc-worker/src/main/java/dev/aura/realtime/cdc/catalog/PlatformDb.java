package dev.aura.realtime.cdc.catalog;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * The worker's privileged Postgres pool ({@code POSTGRES_URL}) for <em>platform SQL</em>: the
 * {@code aura_platform} tables, the bootstrap DDL, and catalog reads ({@code pg_type},
 * {@code pg_class}, {@code pg_attribute}). Statements that evaluate tenant-authored SQL (RLS
 * policies, casts to tenant types) never run here but on {@code tenant.TenantDb}.
 *
 * <p>Only the platform SQL homes open connections on it: this package (what the platform login
 * reads) and {@code provision} (what it creates); ArchitectureTest keeps every other package,
 * and the tenant session above all, off it.
 */
public final class PlatformDb {
    private final DataSource pool;

    public PlatformDb(DataSource pool) {
        this.pool = pool;
    }

    public Connection connection() throws SQLException {
        return pool.getConnection();
    }
}
