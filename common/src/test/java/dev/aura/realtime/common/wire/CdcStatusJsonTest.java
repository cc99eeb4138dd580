package dev.aura.realtime.common.wire;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The status the worker publishes reaches ws-front with the slot's lag; an older worker's without it. */
class CdcStatusJsonTest {
    @Test
    void theSlotsLagSurvivesTheWire() throws Exception {
        CdcStatus sent = new CdcStatus("cdc-1", true, null, null, null, 1_000, 4096L);
        byte[] json = WireJson.mapper().writeValueAsBytes(sent);
        assertThat(new String(json, java.nio.charset.StandardCharsets.UTF_8)).contains("\"slot_lag_bytes\":4096");
        assertThat(WireJson.mapper().readValue(json, CdcStatus.class)).isEqualTo(sent);
    }

    @Test
    void anOlderWorkersStatusHasNoLag() throws Exception {
        String old =
                "{\"instance\":\"cdc-1\",\"active\":true,\"reason\":null,\"gap_from\":null,\"gap_to\":null,\"at_ms\":5}";
        CdcStatus read = WireJson.mapper().readValue(old, CdcStatus.class);
        assertThat(read.active()).isTrue();
        assertThat(read.slotLagBytes()).isNull();
    }
}
