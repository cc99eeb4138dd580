package dev.aura.realtime.cdc.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.cdc.CdcFixture;
import dev.aura.realtime.cdc.CdcSources;
import dev.aura.realtime.cdc.config.CdcSource;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * C5: a table enabled through any path (here SQL on {@code aura_platform.realtime_tables}, as
 * another replica's control API does) and written at once loses no row, nor does a partition
 * created and written at once; partitions are delivered under the enabled root's name. The
 * cached list refreshes only every minute here: the readers must not depend on it.
 */
@ParameterizedClass(name = "CDC_SOURCE={0}")
@EnumSource(CdcSource.class)
class TableEnableRaceIT {
    @Parameter
    CdcSource source;

    private CdcFixture fx;

    @BeforeEach
    void setUp() throws Exception {
        fx = new CdcFixture(PostgresServer.shared(), NatsServer.shared());
        fx.startWorker(CdcSources.env(source, "CDC_TABLE_REFRESH_MS", "60000"));
        fx.createProject();
        fx.sql("CREATE TABLE " + fx.table("warm") + "(id int PRIMARY KEY)");
        fx.enable("warm");
        fx.subscribe("warm", "*", null);
        fx.awaitCaptured("warm");
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    /**
     * What arrived, one per event id: a stream that restarts with a new list publishes what it had
     * read past the old list's bound again (at least once, same ids; receivers drop copies by id).
     */
    private List<CdcFixture.Received> distinct() {
        java.util.Map<String, CdcFixture.Received> byId = new java.util.LinkedHashMap<>();
        fx.received.forEach(r -> byId.putIfAbsent(r.eventId(), r));
        return new ArrayList<>(byId.values());
    }

    @Test
    void rowsWrittenRightAfterATableIsEnabledBySqlAllArrive() throws Exception {
        fx.sql("CREATE TABLE " + fx.table("late") + "(id int PRIMARY KEY)");
        fx.subscribe("late", "*", null);
        List<String> writes = new ArrayList<>();
        for (int i = 1; i <= 20; i++) {
            writes.add("INSERT INTO " + fx.table("late") + " VALUES (" + i + ")");
        }
        fx.enable("late");
        fx.sql(writes.toArray(String[]::new));

        fx.await(r -> r.size() >= 20, Duration.ofSeconds(20));
        fx.awaitSettled();
        assertThat(distinct())
                .extracting(r -> r.data().get("record").get("id").asInt())
                .containsExactlyInAnyOrderElementsOf(
                        java.util.stream.IntStream.rangeClosed(1, 20).boxed().toList());
    }

    @Test
    void partitionsOfAnEnabledRootAreDeliveredUnderTheRootsNameIncludingOneCreatedAndWrittenAtOnce() throws Exception {
        fx.sql(
                "CREATE TABLE " + fx.table("events") + "(id int, k int, PRIMARY KEY (id, k)) PARTITION BY RANGE (k)",
                "CREATE TABLE " + fx.table("events_0") + " PARTITION OF " + fx.table("events")
                        + " FOR VALUES FROM (0) TO (10)");
        fx.subscribe("events", "*", null);
        fx.enable("events");
        fx.sql(
                "INSERT INTO " + fx.table("events") + " VALUES (1, 5)",
                "CREATE TABLE " + fx.table("events_1") + " PARTITION OF " + fx.table("events")
                        + " FOR VALUES FROM (10) TO (20)",
                "INSERT INTO " + fx.table("events") + " VALUES (2, 15)",
                "INSERT INTO " + fx.table("events_1") + " VALUES (3, 16)");

        fx.await(r -> r.size() >= 3, Duration.ofSeconds(20));
        fx.awaitSettled();
        assertThat(fx.received).allSatisfy(r -> {
            assertThat(r.data().get("table").asText()).isEqualTo("events");
            assertThat(r.subject()).endsWith(".events");
        });
        assertThat(distinct())
                .extracting(r -> r.data().get("record").get("id").asInt())
                .containsExactlyInAnyOrder(1, 2, 3);
    }
}
