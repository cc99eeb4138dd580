package dev.aura.realtime.front.presence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PresenceKeysTest {
    @ParameterizedTest
    @ValueSource(strings = {"room-1", "a.b c", "~=~3D", "", ">*", "żółw 🐢", "_kv"})
    void anyNameSurvivesTheRoundTripAsAValidKvKey(String name) {
        String key = PresenceKeys.of("proj-" + name, name, name, "m-1");
        assertThat(key).matches("[-/_=.a-zA-Z0-9]+").startsWith("v1.").doesNotContain("..");
        assertThat(key.split("\\.", -1)).hasSize(5);
        assertThat(PresenceKeys.parse(key)).isEqualTo(new PresenceKeys.Parts("proj-" + name, name, name, "m-1"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"p.t.k.m", "v2.p.t.k.m", "v1.p.t.k.m.x", "v1.p.=ZZ.k.m"})
    void otherKeysAreRefused(String key) {
        assertThatThrownBy(() -> PresenceKeys.parse(key)).isInstanceOf(IllegalArgumentException.class);
    }
}
