package dev.aura.realtime.charttests;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import org.junit.jupiter.api.Test;

class GrafanaDashboardTest {
    /** The metrics the dashboard shows; the one place to update when a metric is renamed. */
    static final List<String> DASHBOARD_METRICS = List.of(
            "aura_cdc_events_published_total",
            "aura_cdc_poll_duration_seconds",
            "aura_cdc_slot_lag_bytes",
            "aura_cdc_slot_recreations_total",
            "aura_cdc_publish_failures_total",
            "aura_cdc_leader_transitions_total",
            "aura_ws_connections",
            "aura_ws_messages_out_total");

    @Test
    void dashboardIsJsonWithAPanelPerMetric() throws IOException {
        String text = Files.readString(ChartFixture.CHART_DIR.resolve("dashboards/aura-realtime.json"));
        JsonNode dashboard = new ObjectMapper().readTree(text);

        assertThat(dashboard.path("uid").asText()).isEqualTo("aura-realtime");
        List<String> exprs = dashboard.path("panels").findValues("expr").stream()
                .map(JsonNode::asText)
                .toList();
        for (String metric : DASHBOARD_METRICS) {
            assertThat(exprs).as("a panel querying %s", metric).anyMatch(e -> e.contains(metric));
        }
    }

    @Test
    void theConfigMapCarriesTheSameDashboard() throws IOException {
        String file = Files.readString(ChartFixture.CHART_DIR.resolve("dashboards/aura-realtime.json"));
        var cm = ChartFixture.render(Scenario.ALL_ON)
                .ofType(io.fabric8.kubernetes.api.model.ConfigMap.class)
                .get(0);
        var mapper = new ObjectMapper();
        assertThat(mapper.readTree(cm.getData().get("aura-realtime.json"))).isEqualTo(mapper.readTree(file));
    }
}
