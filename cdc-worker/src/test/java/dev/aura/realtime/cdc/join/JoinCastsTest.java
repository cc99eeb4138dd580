package dev.aura.realtime.cdc.join;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class JoinCastsTest {
    @Test
    void theCastTakesItsValueAsAParameter() {
        assertThat(JoinCasts.query("numeric(5,2)"))
                .isEqualTo("SELECT ARRAY[(CAST(($1)[1] AS numeric(5,2)) IS NULL)::text]");
    }
}
