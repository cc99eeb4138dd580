package dev.aura.realtime.cdc;

import dev.aura.realtime.cdc.config.CdcSource;
import java.util.HashMap;
import java.util.Map;

/**
 * Worker environments for tests that run once per way of reading the slot (docs/design.md C12):
 * a class annotated {@code @ParameterizedClass @EnumSource(CdcSource.class)} runs all its tests
 * with {@code CDC_SOURCE=stream} and again with {@code CDC_SOURCE=poll}.
 */
public final class CdcSources {
    private CdcSources() {}

    /** {@code CDC_SOURCE} for {@code source}, plus the given name/value pairs. */
    public static Map<String, String> env(CdcSource source, String... nameValues) {
        Map<String, String> env = new HashMap<>();
        env.put("CDC_SOURCE", source.configValue());
        for (int i = 0; i + 1 < nameValues.length; i += 2) {
            env.put(nameValues[i], nameValues[i + 1]);
        }
        return env;
    }
}
