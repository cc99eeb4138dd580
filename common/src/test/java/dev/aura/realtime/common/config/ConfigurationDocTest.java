package dev.aura.realtime.common.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * docs/configuration.md lists exactly the variables of {@link EnvVars}, with their defaults and
 * units. Regenerate the tables with
 * {@code mvn -pl common test -Dtest=ConfigurationDocTest -Daura.docs.write=true}.
 */
class ConfigurationDocTest {
    static final String BEGIN = "<!-- BEGIN GENERATED: %s -->";
    static final String END = "<!-- END GENERATED: %s -->";

    @Test
    void configurationDocListsEveryVariableWithDefaultAndUnit() throws IOException {
        Path doc = repoRoot().resolve("docs/configuration.md");
        String text = Files.readString(doc, StandardCharsets.UTF_8);
        String updated = replace(replace(text, "cdc-worker", EnvVars.CDC_WORKER), "ws-front", EnvVars.WS_FRONT);
        if (Boolean.getBoolean("aura.docs.write")) {
            Files.writeString(doc, updated, StandardCharsets.UTF_8);
            text = updated;
        }
        assertThat(text)
                .as("docs/configuration.md is out of date with EnvVars; regenerate: "
                        + "mvn -pl common test -Dtest=ConfigurationDocTest -Daura.docs.write=true")
                .isEqualTo(updated);
    }

    static String replace(String text, String section, List<EnvVar> vars) {
        String begin = String.format(BEGIN, section);
        String end = String.format(END, section);
        int b = text.indexOf(begin);
        int e = text.indexOf(end);
        assertThat(b).as("marker " + begin + " in docs/configuration.md").isNotNegative();
        assertThat(e).as("marker " + end + " in docs/configuration.md").isGreaterThan(b);
        return text.substring(0, b + begin.length()) + "\n" + table(vars) + text.substring(e);
    }

    static String table(List<EnvVar> vars) {
        StringBuilder sb = new StringBuilder("| variable | default | unit | meaning |\n|---|---|---|---|\n");
        for (EnvVar v : vars) {
            sb.append("| `")
                    .append(v.name())
                    .append("` | ")
                    .append(v.defaultValue() == null ? "(required)" : "`" + v.defaultValue() + "`")
                    .append(" | ")
                    .append(v.unit())
                    .append(" | ")
                    .append(v.description().replace("|", "\\|"))
                    .append(" |\n");
        }
        return sb.toString();
    }

    static Path repoRoot() {
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !Files.exists(p.resolve("docs"))) {
            p = p.getParent();
        }
        if (p == null) {
            throw new IllegalStateException(
                    "no docs/ directory above " + Path.of("").toAbsolutePath());
        }
        return p;
    }
}
