package dev.aura.realtime.cdc.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.aura.realtime.common.config.ConfigException;
import dev.aura.realtime.common.config.Env;
import dev.aura.realtime.common.config.Setting;
import dev.aura.realtime.testkit.SettingsDoc;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The cdc-worker's declarations ({@link CdcSettings}) are what it reads and what
 * docs/configuration.md's cdc-worker table says.
 */
class CdcSettingsTest {
    private static final String NOT_A_VALUE = "%not-a-value%";

    @Test
    void docsConfigurationListsEveryVariableTheWorkerReads_withItsDefaultUnitRangeAndDoc() {
        SettingsDoc.verify("cdc-worker", CdcSettings.ALL);
    }

    @Test
    void everyDeclarationThatRefusesAValueIsReadAtStartUp() {
        int checked = 0;
        for (Setting<?> setting : CdcSettings.ALL) {
            if (refuses(setting)) {
                Map<String, String> env = new HashMap<>(Map.of(
                        "POSTGRES_REPLICATION_URL", "jdbc:postgresql://db/app",
                        "AURA_JWT_SECRET", "0123456789abcdef0123456789abcdef"));
                env.put(setting.name(), NOT_A_VALUE);
                assertThatThrownBy(() -> CdcConfig.fromEnv(new Env(env)))
                        .as("%s is declared, so CdcConfig must read it", setting.name())
                        .isInstanceOf(ConfigException.class)
                        .hasMessageStartingWith(setting.name() + "=");
                checked++;
            }
        }
        assertThat(checked).isGreaterThan(25);
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
