package dev.aura.realtime.cdc.catalog;

import java.sql.SQLException;

/** {@code pg_type.oid → typname} as realtime-js expects it in {@code columns}; {@link TypeCatalog} in production. */
@FunctionalInterface
public interface TypeNames {
    /** @throws SQLException when the name has to be looked up and the lookup fails */
    String typname(long oid) throws SQLException;
}
