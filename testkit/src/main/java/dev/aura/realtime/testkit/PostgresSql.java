package dev.aura.realtime.testkit;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The SQL conveniences of {@link PostgresServer}, each on a fresh autocommit connection to a
 * JDBC URL, with {@link UncheckedSqlException}s that name the statement or the URL.
 */
final class PostgresSql {
    private PostgresSql() {}

    static Connection connect(String jdbcUrl) {
        try {
            return DriverManager.getConnection(jdbcUrl);
        } catch (SQLException e) {
            throw new UncheckedSqlException("cannot connect to " + jdbcUrl, e);
        }
    }

    /** Runs each statement in order, each in its own autocommit statement. */
    static void execute(String jdbcUrl, String... sql) {
        try (Connection connection = connect(jdbcUrl);
                Statement statement = connection.createStatement()) {
            for (String each : sql) {
                try {
                    statement.execute(each);
                } catch (SQLException e) {
                    throw new UncheckedSqlException("failed: " + each, e);
                }
            }
        } catch (SQLException e) {
            throw new UncheckedSqlException("cannot close connection to " + jdbcUrl, e);
        }
    }

    /** Whether {@code pg_settings} has a row named {@code name}. */
    static boolean knowsSetting(String jdbcUrl, String name) {
        try (Connection connection = connect(jdbcUrl);
                PreparedStatement statement =
                        connection.prepareStatement("select count(*) from pg_settings where name = ?")) {
            statement.setString(1, name);
            try (ResultSet rs = statement.executeQuery()) {
                rs.next();
                return rs.getInt(1) > 0;
            }
        } catch (SQLException e) {
            throw new UncheckedSqlException("cannot read pg_settings on " + jdbcUrl, e);
        }
    }

    /** The first column of the first row of {@code query}, as text. */
    static String queryOne(String jdbcUrl, String query) {
        try (Connection connection = connect(jdbcUrl);
                Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery(query)) {
            rs.next();
            return rs.getString(1);
        } catch (SQLException e) {
            throw new UncheckedSqlException("failed on " + jdbcUrl + ": " + query, e);
        }
    }
}
