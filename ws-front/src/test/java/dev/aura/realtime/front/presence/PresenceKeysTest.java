package dev.aura.realtime.front.presence;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.common.wire.Subjects;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PresenceKeysTest {
    /** The parts of a key, decoded as the scheme documents it ({@code =} stands for {@code ~}). */
    private static List<String> parts(String key) {
        String[] p = key.split("\\.", -1);
        assertThat(p[0]).isEqualTo(PresenceKeys.VERSION);
        return Arrays.stream(p, 1, p.length)
                .map(t -> Subjects.decodeToken(t.replace('=', '~')))
                .toList();
    }

    @ParameterizedTest
    @ValueSource(strings = {"room-1", "a.b c", "~=~3D", "", ">*", "żółw 🐢", "_kv"})
    void anyNameBecomesAValidKvKeyFromWhichItCanBeReadBack(String name) {
        String key = PresenceKeys.of("proj-" + name, name, name, "m-1");
        assertThat(key).matches("[-/_=.a-zA-Z0-9]+").startsWith("v1.").doesNotContain("..");
        assertThat(parts(key)).containsExactly("proj-" + name, name, name, "m-1");
    }
}
