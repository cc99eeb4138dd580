package dev.aura.realtime.front.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/** {@code persist} as realtime-js 2.119.2 sends it: {@code true}, or {@code {ttl: seconds}}; REST's query form. */
class PersistTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static Persist of(String json) throws Exception {
        JsonNode node = JSON.readTree("{\"persist\":" + json + "}").get("persist");
        return Persist.of(node);
    }

    @Test
    void aPushSaysTrueOrATtlInSeconds() throws Exception {
        assertThat(Persist.of(null)).isNull();
        assertThat(of("false")).isNull();
        assertThat(of("null")).isNull();
        assertThat(of("true")).isEqualTo(Persist.RETENTION);
        assertThat(of("{}"))
                .as("realtime-js sends {ttl: undefined} as persist=true")
                .isEqualTo(Persist.RETENTION);
        assertThat(of("{\"ttl\":5}")).isEqualTo(new Persist(5_000, null));
        assertThat(of("{\"ttl\":0.25}")).isEqualTo(new Persist(250, null));
        assertThat(of("{\"ttl\":1e300}").ttlMs()).isEqualTo(Persist.MAX_TTL_MS);
        for (String bad : new String[] {"{\"ttl\":0}", "{\"ttl\":-3}", "{\"ttl\":\"5\"}", "{\"ttl\":true}"}) {
            assertThat(of(bad).invalid()).as(bad).isEqualTo(Persist.INVALID_TTL);
        }
    }

    @Test
    void restSaysPersistTrueOrPersistTtl() {
        assertThat(Persist.ofQuery(null, null)).isNull();
        assertThat(Persist.ofQuery("false", null)).isNull();
        assertThat(Persist.ofQuery("true", null)).isEqualTo(Persist.RETENTION);
        assertThat(Persist.ofQuery(null, "30")).isEqualTo(new Persist(30_000, null));
        assertThat(Persist.ofQuery(null, "soon").invalid()).isEqualTo(Persist.INVALID_TTL);
        assertThat(Persist.ofQuery(null, "-1").invalid()).isEqualTo(Persist.INVALID_TTL);
        assertThat(Persist.ofQuery(null, "NaN").invalid()).isEqualTo(Persist.INVALID_TTL);
    }
}
