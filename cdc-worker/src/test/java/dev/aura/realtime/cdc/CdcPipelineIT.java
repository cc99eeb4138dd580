package dev.aura.realtime.cdc;

import static org.assertj.core.api.Assertions.assertThat;

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

/** A committed change of an enabled table reaches NATS as a postgres_changes event; others do not. */
@ParameterizedClass(name = "CDC_SOURCE={0}")
@EnumSource(CdcSource.class)
class CdcPipelineIT {
    @Parameter
    CdcSource source;

    private CdcFixture fx;

    @BeforeEach
    void setUp() throws Exception {
        fx = new CdcFixture(PostgresServer.shared(), NatsServer.shared());
        fx.startWorker(CdcSources.env(source));
        fx.createProject();
        fx.sql(
                "CREATE TABLE \"" + fx.schema + "\".messages(id bigserial PRIMARY KEY, body text, owner uuid)",
                "ALTER TABLE \"" + fx.schema + "\".messages REPLICA IDENTITY FULL",
                "CREATE TABLE \"" + fx.schema + "\".unwatched(id int PRIMARY KEY, v text)");
        fx.enable("messages");
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    @Test
    void insertUpdateDeleteOfAnEnabledTableArePublishedInCommitOrder() throws Exception {
        String subId = fx.subscribe("messages", "*", null);
        fx.awaitCaptured("messages");
        String t = "\"" + fx.schema + "\".messages";
        fx.sql(
                "INSERT INTO " + t + "(body) VALUES ('hello')",
                "UPDATE " + t + " SET body = 'edited' WHERE body = 'hello'",
                "DELETE FROM " + t + " WHERE body = 'edited'",
                "INSERT INTO \"" + fx.schema + "\".unwatched VALUES (1, 'x')");

        List<CdcFixture.Received> got = fx.await(r -> r.size() >= 3, Duration.ofSeconds(15));
        assertThat(got).extracting(r -> r.data().get("type").asText()).containsExactly("INSERT", "UPDATE", "DELETE");

        CdcFixture.Received insert = got.get(0);
        assertThat(insert.subject()).endsWith(".messages");
        assertThat(insert.eventId())
                .isEqualTo(insert.body().get("event_id").asText())
                .matches("[0-9A-F]+/[0-9A-F]+:0");
        assertThat(insert.origin()).isNotBlank();
        assertThat(insert.epoch()).isEqualTo("0");
        assertThat(insert.body().get("allowed_sub_ids"))
                .extracting(n -> n.asText())
                .containsExactly(subId);
        assertThat(insert.data().get("schema").asText()).isEqualTo("public");
        assertThat(insert.data().get("table").asText()).isEqualTo("messages");
        assertThat(insert.data().get("commit_timestamp").asText())
                .matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?Z");
        assertThat(insert.data().get("record").get("body").asText()).isEqualTo("hello");
        assertThat(insert.data().get("record").get("id").isIntegralNumber()).isTrue();
        assertThat(insert.data().has("old_record")).isFalse();
        assertThat(insert.data().get("errors").isNull()).isTrue();
        assertThat(insert.data().get("columns").toString())
                .contains(
                        "{\"name\":\"id\",\"type\":\"int8\"}",
                        "{\"name\":\"body\",\"type\":\"text\"}",
                        "{\"name\":\"owner\",\"type\":\"uuid\"}");

        CdcFixture.Received update = got.get(1);
        assertThat(update.data().get("record").get("body").asText()).isEqualTo("edited");
        assertThat(update.data().get("old_record").get("body").asText()).isEqualTo("hello");

        CdcFixture.Received delete = got.get(2);
        assertThat(delete.data().has("record")).isFalse();
        assertThat(delete.data().get("old_record").get("body").asText()).isEqualTo("edited");

        fx.awaitSettled();
        assertThat(fx.received).hasSize(3);
        assertThat(fx.received).noneMatch(r -> r.subject().endsWith(".unwatched"));
    }

    @Test
    void eventAndFilterOfEachBindingAreApplied() throws Exception {
        String inserts = fx.subscribe("messages", "INSERT", null);
        String onlyB = fx.subscribe("messages", "*", "body=eq.b");
        fx.awaitCaptured("messages");
        String t = "\"" + fx.schema + "\".messages";
        fx.sql(
                "INSERT INTO " + t + "(body) VALUES ('a')",
                "INSERT INTO " + t + "(body) VALUES ('b')",
                "UPDATE " + t + " SET body = 'b' WHERE body = 'b'");
        List<CdcFixture.Received> got = fx.await(r -> r.size() >= 3, Duration.ofSeconds(15));
        assertThat(got.get(0).body().get("allowed_sub_ids").toString())
                .contains(inserts)
                .doesNotContain(onlyB);
        assertThat(got.get(1).body().get("allowed_sub_ids").toString()).contains(inserts, onlyB);
        assertThat(got.get(2).data().get("type").asText()).isEqualTo("UPDATE");
        assertThat(got.get(2).body().get("allowed_sub_ids").toString())
                .contains(onlyB)
                .doesNotContain(inserts);
    }
}
