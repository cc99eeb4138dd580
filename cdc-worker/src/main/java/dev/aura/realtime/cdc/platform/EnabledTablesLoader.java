package dev.aura.realtime.cdc.platform;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/** Reads the enabled tables from {@code aura_platform} on a given connection. */
public final class EnabledTablesLoader {
    private static final String QUERY = """
            SELECT p.project_id::text, p.schema_name, rt.table_name
              FROM aura_platform.realtime_tables rt
              JOIN aura_platform.projects p USING (project_id)
             WHERE rt.enabled
             ORDER BY 1, 3""";

    private EnabledTablesLoader() {}

    /** @throws SQLException on query failure */
    public static EnabledTables load(Connection c) throws SQLException {
        List<EnabledTable> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(QUERY);
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.add(new EnabledTable(rs.getString(1), rs.getString(2), rs.getString(3)));
            }
        }
        return new EnabledTables(out);
    }
}
