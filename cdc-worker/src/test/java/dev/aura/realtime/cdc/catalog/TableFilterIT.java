package dev.aura.realtime.cdc.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.cdc.CdcFixture;
import dev.aura.realtime.cdc.CdcSources;
import dev.aura.realtime.cdc.config.CdcSource;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/** C5: wal2json add-tables escaping for awkward names, case sensitivity, and disabling within one refresh. */
@ParameterizedClass(name = "CDC_SOURCE={0}")
@EnumSource(CdcSource.class)
class TableFilterIT {
    @Parameter
    CdcSource source;

    private static final List<String> NAMES =
            List.of("My Table", "a.b", "x,y", "Ünïcode", "\"quoted\"", "CamelCase", "back\\slash", "st*r");
    private CdcFixture fx;

    @BeforeEach
    void setUp() throws Exception {
        fx = new CdcFixture(PostgresServer.shared(), NatsServer.shared());
        fx.startWorker(CdcSources.env(source, "CDC_TABLE_REFRESH_MS", "300"));
        fx.createProject();
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    @Test
    void awkwardNamesAreCapturedExactlyAndDisablingStopsWithinOneRefresh() throws Exception {
        for (String name : NAMES) {
            fx.sql("CREATE TABLE " + fx.table(name) + "(id int PRIMARY KEY)");
            fx.enable(name);
            fx.subscribe(name, "*", null);
        }
        // Decoys a wrong escaping or a case-insensitive match would capture.
        for (String decoy : List.of("camelcase", "My", "x", "ab", "backslash", "str", "stXr")) {
            fx.sql("CREATE TABLE " + fx.table(decoy) + "(id int PRIMARY KEY)");
        }
        fx.awaitCaptured(NAMES.toArray(String[]::new));
        for (String name : List.of("camelcase", "My", "x", "ab", "backslash", "str", "stXr")) {
            fx.sql("INSERT INTO " + fx.table(name) + " VALUES (0)");
        }
        for (String name : NAMES) {
            fx.sql("INSERT INTO " + fx.table(name) + " VALUES (1)");
        }
        fx.await(r -> r.size() >= NAMES.size(), Duration.ofSeconds(15));
        fx.awaitSettled();
        assertThat(fx.received).extracting(r -> r.data().get("table").asText()).containsExactlyElementsOf(NAMES);

        fx.disable("CamelCase");
        fx.awaitNotCaptured("CamelCase");
        fx.sql(
                "INSERT INTO " + fx.table("CamelCase") + " VALUES (2)",
                "INSERT INTO " + fx.table("My Table") + " VALUES (2)");
        fx.await(r -> r.size() >= NAMES.size() + 1, Duration.ofSeconds(10));
        fx.awaitSettled();
        assertThat(fx.received.subList(NAMES.size(), fx.received.size()))
                .extracting(r -> r.data().get("table").asText())
                .containsExactly("My Table");
    }

    @Test
    void theAddTablesOptionEscapesWal2jsonMetacharactersAndIsNeverEmpty() {
        EnabledTables tables = new EnabledTables(List.of(new EnabledTable("p", "s 1", "a.b,c*d\\e")));
        assertThat(tables.addTablesOption()).isEqualTo("s\\ 1.a\\.b\\,c\\*d\\\\e");
        assertThat(EnabledTables.empty().isEmpty()).isTrue();
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> EnabledTables.empty().addTablesOption())
                .isInstanceOf(IllegalStateException.class);
    }
}
