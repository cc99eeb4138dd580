package dev.aura.realtime.common.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** One declaration reads, checks and documents its variable; its default cannot leave its range. */
class SettingTest {
    enum Mode {
        STREAM,
        POLL
    }

    private static Env env(String... pairs) {
        Map<String, String> vars = new java.util.HashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            vars.put(pairs[i], pairs[i + 1]);
        }
        return new Env(vars);
    }

    @Test
    void anUnsetOrBlankVariableHasItsDefault_aSetOneIsParsedInItsUnit() {
        Setting<Duration> backoff =
                Setting.millis("X_BACKOFF_MS", 100).range(0, 60_000).doc("sleep");
        assertThat(backoff.read(env())).isEqualTo(Duration.ofMillis(100));
        assertThat(backoff.read(env("X_BACKOFF_MS", "  "))).isEqualTo(Duration.ofMillis(100));
        assertThat(backoff.read(env("X_BACKOFF_MS", " 250 "))).isEqualTo(Duration.ofMillis(250));
        assertThat(Setting.seconds("X_SECONDS", 2).read(env())).isEqualTo(Duration.ofSeconds(2));
        assertThat(Setting.hours("X_HOURS", 3).read(env())).isEqualTo(Duration.ofHours(3));
        assertThat(Setting.bytes("X_BYTES", 64).read(env("X_BYTES", "65"))).isEqualTo(65L);
        assertThat(backoff.unit()).isEqualTo("ms");
        assertThat(backoff.defaultText()).contains("100");
    }

    @Test
    void aMalformedOrOutOfRangeNumberIsRefusedNamingTheVariableAndItsValue() {
        Setting<Integer> shards =
                Setting.integer("X_SHARDS", "count", 4).range(1, 256).doc("shards");
        assertThatThrownBy(() -> shards.read(env("X_SHARDS", "four")))
                .isInstanceOf(ConfigException.class)
                .hasMessage("X_SHARDS=four is not an integer");
        assertThatThrownBy(() -> shards.read(env("X_SHARDS", "0")))
                .isInstanceOf(ConfigException.class)
                .hasMessage("X_SHARDS=0 is out of range [1, 256]");
        assertThatThrownBy(() -> shards.read(env("X_SHARDS", "99999999999")))
                .isInstanceOf(ConfigException.class)
                .hasMessage("X_SHARDS=99999999999 is out of range [1, 256]");
        assertThat(shards.read(env("X_SHARDS", "256"))).isEqualTo(256);
    }

    @Test
    void aDefaultOutsideItsRangeOrChoicesIsRefusedWhereItIsDeclared() {
        assertThatThrownBy(() -> Setting.integer("X_SHARDS", "count", 0).range(1, 256))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("X_SHARDS")
                .hasMessageContaining("out of range [1, 256]");
        assertThatThrownBy(() -> Setting.text("X_SLOT", "Bad-Slot").matching("[a-z_]+", "slot names"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("X_SLOT");
        assertThatThrownBy(() -> Setting.oneOf("X_STORE", "disk", "file", "memory"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be one of [file, memory]");
        assertThatThrownBy(() -> Setting.integer("X_INT", "", 1).range(0, Long.MAX_VALUE))
                .as("an int setting's range fits an int")
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aChoiceIsCaseInsensitiveAndAnUnknownOneListsTheChoices() {
        Setting<Mode> mode = Setting.oneOf("X_SOURCE", Mode.STREAM).doc("how");
        assertThat(mode.read(env())).isEqualTo(Mode.STREAM);
        assertThat(mode.read(env("X_SOURCE", "POLL"))).isEqualTo(Mode.POLL);
        assertThatThrownBy(() -> mode.read(env("X_SOURCE", "Push")))
                .isInstanceOf(ConfigException.class)
                .hasMessage("X_SOURCE=push must be one of [stream, poll]");
        assertThat(mode.defaultText()).contains("stream");
        assertThat(mode.rangeDoc()).isEqualTo("stream, poll");

        Setting<String> storage = Setting.oneOf("X_STORE", "file", "file", "memory");
        assertThat(storage.read(env("X_STORE", "Memory"))).isEqualTo("memory");
    }

    @Test
    void booleansAndPatternsAreCheckedWithTheirRule() {
        Setting<Boolean> on = Setting.bool("X_ON", true).doc("on");
        assertThat(on.read(env("X_ON", "no"))).isFalse();
        assertThat(on.read(env("X_ON", "YES"))).isTrue();
        assertThatThrownBy(() -> on.read(env("X_ON", "maybe")))
                .isInstanceOf(ConfigException.class)
                .hasMessage("X_ON=maybe is not a boolean (true|false)");

        Setting<String> slot = Setting.text("X_SLOT", "aura").matching("[a-z0-9_]{1,63}", "Postgres slot name rules");
        assertThatThrownBy(() -> slot.read(env("X_SLOT", "Aura")))
                .isInstanceOf(ConfigException.class)
                .hasMessage("X_SLOT=Aura must match [a-z0-9_]{1,63} (Postgres slot name rules)");
        assertThat(slot.rangeDoc()).isEqualTo("[a-z0-9_]{1,63}");
    }

    @Test
    void aRequiredVariableIsNamedWhenMissing_anOptionalOneIsFoundOrNot() {
        Setting<String> url = Setting.required("X_URL").doc("url");
        assertThatThrownBy(() -> url.read(env()))
                .isInstanceOf(ConfigException.class)
                .hasMessage("X_URL is required but not set");
        assertThat(url.read(env("X_URL", "jdbc:x"))).isEqualTo("jdbc:x");
        assertThat(url.isRequired()).isTrue();
        assertThat(url.defaultText()).isEmpty();
        assertThat(url.defaultDoc()).isEqualTo("(required)");

        Setting<String> user = Setting.optional("X_USER", "(unset)").doc("user");
        assertThat(user.find(env())).isEmpty();
        assertThat(user.find(env("X_USER", "u"))).contains("u");
        assertThat(user.isRequired()).isFalse();
        assertThat(user.defaultDoc()).isEqualTo("(unset)");
        assertThatThrownBy(() -> user.read(env()))
                .as("a setting without default is read with find")
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void theRangeIsDocumentedAsItIsChecked() {
        assertThat(Setting.integer("A", "", 1).range(1, 256).rangeDoc()).isEqualTo("1 to 256");
        assertThat(Setting.bytes("A_BYTES", 2048).range(1024, Long.MAX_VALUE).rangeDoc())
                .isEqualTo("≥ 1024");
        assertThat(Setting.integer("A", "", 1).range(1, Integer.MAX_VALUE).rangeDoc())
                .isEqualTo("≥ 1");
        assertThat(Setting.bool("A", true).rangeDoc()).isEqualTo("true, false");
        assertThat(Setting.required("A").rangeDoc()).isEmpty();
    }
}
