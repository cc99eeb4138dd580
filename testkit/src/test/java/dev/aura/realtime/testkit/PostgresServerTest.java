package dev.aura.realtime.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PostgresServerTest {

    @Test
    void decodesAnInsertThroughAWal2jsonSlotAndSurvivesACrash() throws Exception {
        try (PostgresServer pg = PostgresServer.builder()
                .setting("max_slot_wal_keep_size", "64MB")
                .start()) {
            pg.execute(
                    "create table notes(id int primary key, body text)",
                    "select pg_create_logical_replication_slot('testkit_slot', 'wal2json')",
                    "insert into notes values (1, 'hello')");

            assertThat(peekChanges(pg))
                    .anySatisfy(change -> assertThat(change)
                            .contains("\"action\":\"I\"")
                            .contains("\"table\":\"notes\"")
                            .contains("hello"));
            assertThat(queryOne(pg, "show max_slot_wal_keep_size")).isEqualTo("64MB");
            assertThat(queryOne(pg, "show wal_level")).isEqualTo("logical");

            int port = pg.port();
            pg.kill();
            pg.restart();
            assertThat(pg.port()).isEqualTo(port);
            assertThat(queryOne(pg, "select body from notes where id = 1")).isEqualTo("hello");

            pg.stop();
            pg.restart();
            assertThat(queryOne(pg, "select count(*) from pg_replication_slots"))
                    .isEqualTo("1");
        }
    }

    private static List<String> peekChanges(PostgresServer pg) throws Exception {
        List<String> changes = new ArrayList<>();
        try (Connection connection = pg.connect();
                Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery(
                        "select data from pg_logical_slot_peek_changes('testkit_slot', null, null, 'format-version', '2')")) {
            while (rows.next()) {
                changes.add(rows.getString(1));
            }
        }
        return changes;
    }

    private static String queryOne(PostgresServer pg, String sql) throws Exception {
        try (Connection connection = pg.connect();
                Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery(sql)) {
            rows.next();
            return rows.getString(1);
        }
    }
}
