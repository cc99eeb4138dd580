package dev.aura.realtime.cdc.catalog;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code pg_type.oid → typname}, the column type names realtime-js converts values by
 * ({@code int4}, {@code _text}, {@code jsonb}, user enums such as {@code Mood}).
 *
 * <p>Loaded whole at first use and reloaded when an unknown OID appears (a type created after
 * start). Thread-safe. We ask for {@code include-type-oids} rather than wal2json's own type
 * names because {@code include-types} prints invalid JSON for some quoted type names.
 */
public final class TypeCatalog implements TypeNames {
    private static final Logger log = LoggerFactory.getLogger(TypeCatalog.class);
    private final PlatformDb db;
    private final Map<Long, String> names = new ConcurrentHashMap<>();

    public TypeCatalog(PlatformDb db) {
        this.db = db;
    }

    /**
     * @return the typname, or {@code "unknown"} when the OID is not in {@code pg_type} even after a reload
     * @throws SQLException when the reload query fails
     */
    @Override
    public String typname(long oid) throws SQLException {
        String name = names.get(oid);
        if (name != null) {
            return name;
        }
        reload();
        name = names.get(oid);
        if (name == null) {
            log.warn("[TypeOidUnknown] type oid {} not found in pg_type; reporting it as 'unknown'", oid);
            names.put(oid, "unknown");
            return "unknown";
        }
        return name;
    }

    /** Re-reads {@code pg_type}. */
    private synchronized void reload() throws SQLException {
        try (Connection c = db.connection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT oid::int8, typname FROM pg_catalog.pg_type")) {
            while (rs.next()) {
                names.put(rs.getLong(1), rs.getString(2));
            }
        }
    }
}
