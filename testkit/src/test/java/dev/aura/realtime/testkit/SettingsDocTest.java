package dev.aura.realtime.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.aura.realtime.common.config.Setting;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The rules every declaration keeps, and the docs row it becomes. */
class SettingsDocTest {

    @Test
    void aDeclarationWithoutDocTwiceDeclaredOrWithAUnitItsNameDoesNotSayIsAProblem() {
        List<Setting<?>> settings = List.of(
                Setting.bytes("X_BUFFER_BYTES", 1024),
                Setting.millis("X_TIMEOUT_MS", 5).doc("timeout"),
                Setting.millis("X_TIMEOUT_MS", 5).doc("timeout again"),
                Setting.integer("X_LIMIT_BYTES", "count", 1).doc("limit"),
                Setting.integer("X_PERIOD", "ms", 1).doc("period"),
                Setting.bytes("X_MAX_BYTES_PER_PROJECT", 1).doc("a qualified unit is fine"),
                Setting.longValue("X_MAX_BYTES_PER_SECOND", "bytes/s", 1).doc("so is a rate"));
        assertThat(SettingsDoc.declarationProblems(settings))
                .containsExactly(
                        "X_BUFFER_BYTES has no doc",
                        "X_TIMEOUT_MS is declared twice",
                        "X_LIMIT_BYTES has unit 'count': a name ending _BYTES and the unit bytes go together",
                        "X_PERIOD has unit 'ms': a name ending _MS and the unit ms go together");
        assertThatThrownBy(() -> SettingsDoc.verify("x", settings))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("X_BUFFER_BYTES has no doc");
    }

    @Test
    void aRowShowsTheDefaultUnitRangeAndDoc_aTableIsReplacedBetweenItsMarkers() {
        List<Setting<?>> settings = List.of(
                Setting.integer("X_SHARDS", "count", 4).range(1, 256).doc("shards"),
                Setting.required("X_URL").doc("a | b"),
                Setting.optional("X_USER", "(unset)").doc("user"));
        String table = SettingsDoc.table(settings);
        assertThat(table)
                .contains("| `X_SHARDS` | `4` | count | 1 to 256 | shards |")
                .contains("| `X_URL` | (required) |  |  | a \\| b |")
                .contains("| `X_USER` | `(unset)` |  |  | user |");
        String doc = "intro\n<!-- BEGIN GENERATED: x -->\nold\n<!-- END GENERATED: x -->\nrest";
        assertThat(SettingsDoc.withTable(doc, "x", settings))
                .isEqualTo("intro\n<!-- BEGIN GENERATED: x -->\n" + table + "<!-- END GENERATED: x -->\nrest");
    }
}
