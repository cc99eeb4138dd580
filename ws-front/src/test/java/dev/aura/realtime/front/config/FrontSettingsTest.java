package dev.aura.realtime.front.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.aura.realtime.common.config.ConfigException;
import dev.aura.realtime.common.config.Env;
import dev.aura.realtime.common.config.Setting;
import dev.aura.realtime.testkit.SettingsDoc;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * ws-front's declarations ({@link FrontSettings}, {@link ProjectLimitSettings}) are what it reads
 * and what docs/configuration.md's ws-front table says.
 */
class FrontSettingsTest {
    private static final String NOT_A_VALUE = "%not-a-value%";

    @Test
    void docsConfigurationListsEveryVariableWsFrontReads_withItsDefaultUnitRangeAndDoc() {
        SettingsDoc.verify("ws-front", FrontSettings.ALL);
    }

    @Test
    void everyDeclarationThatRefusesAValueIsReadAtStartUp() {
        int checked = 0;
        for (Setting<?> setting : FrontSettings.ALL) {
            if (refuses(setting)) {
                Env env = new Env(Map.of(
                        "AURA_JWT_SECRET", "config-test-secret-config-test-secret", setting.name(), NOT_A_VALUE));
                assertThatThrownBy(() -> FrontConfig.load(env))
                        .as("%s is declared, so FrontConfig must read it", setting.name())
                        .isInstanceOf(ConfigException.class)
                        .hasMessageStartingWith(setting.name() + "=");
                checked++;
            }
        }
        assertThat(checked).isGreaterThan(45);
    }

    private static boolean refuses(Setting<?> setting) {
        try {
            setting.find(new Env(Map.of(setting.name(), NOT_A_VALUE)));
            return false;
        } catch (ConfigException e) {
            return true;
        }
    }
}
