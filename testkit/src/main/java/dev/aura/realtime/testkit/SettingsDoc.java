package dev.aura.realtime.testkit;

import dev.aura.realtime.common.config.Setting;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * docs/configuration.md's tables of environment variables, generated from a binary's
 * {@link Setting} declarations, and the rules every declaration keeps. Each binary's settings
 * test calls {@link #verify}: it fails when the table between the section's
 * {@code <!-- BEGIN GENERATED: section -->} and {@code <!-- END GENERATED: section -->} markers
 * is not the one the declarations give, or when a declaration breaks a rule. With
 * {@code -Daura.docs.write=true} it rewrites the table instead.
 */
public final class SettingsDoc {
    /** The property that makes {@link #verify} rewrite the docs instead of failing. */
    public static final String WRITE_PROPERTY = "aura.docs.write";

    /** The command that regenerates every table. */
    public static final String REGENERATE = "mvn -B -q test -pl cdc-worker,ws-front -am -Dtest='*SettingsTest'"
            + " -Dsurefire.failIfNoSpecifiedTests=false -D" + WRITE_PROPERTY + "=true";

    /** Name suffix → the unit a variable with it must have (units are part of the names). */
    private static final Map<String, String> SUFFIX_UNITS =
            Map.of("_MS", "ms", "_SECONDS", "s", "_HOURS", "h", "_BYTES", "bytes");

    private SettingsDoc() {}

    /**
     * Checks the declarations and the section's table in docs/configuration.md.
     *
     * @throws AssertionError naming every declaration problem, or showing the table expected
     */
    public static void verify(String section, List<Setting<?>> settings) {
        List<String> problems = declarationProblems(settings);
        if (!problems.isEmpty()) {
            throw new AssertionError(
                    "the " + section + " settings break the declaration rules:\n  " + String.join("\n  ", problems));
        }
        Path doc = RepoRoot.find().resolve("docs/configuration.md");
        try {
            String text = Files.readString(doc, StandardCharsets.UTF_8);
            String updated = withTable(text, section, settings);
            if (Boolean.getBoolean(WRITE_PROPERTY)) {
                Files.writeString(doc, updated, StandardCharsets.UTF_8);
            } else if (!text.equals(updated)) {
                throw new AssertionError("docs/configuration.md's " + section
                        + " table is not the one its declarations give; regenerate it with\n  " + REGENERATE
                        + "\nExpected table:\n" + table(settings));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * What breaks the rules: a declaration without doc, a name declared twice, a unit its name
     * does not say ({@code _MS} is "ms", {@code _SECONDS} "s", {@code _HOURS} "h", {@code _BYTES}
     * "bytes", at the end of the name or before a qualifier such as {@code _PER_PROJECT} or
     * {@code _PER_SECOND} (then "bytes/s"), and the reverse).
     */
    public static List<String> declarationProblems(List<Setting<?>> settings) {
        List<String> problems = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (Setting<?> s : settings) {
            if (!seen.add(s.name())) {
                problems.add(s.name() + " is declared twice");
            }
            if (s.doc().isBlank()) {
                problems.add(s.name() + " has no doc");
            }
            for (var suffix : SUFFIX_UNITS.entrySet()) {
                boolean named = s.name().endsWith(suffix.getKey())
                        || s.name().contains(suffix.getKey() + "_"); // HISTORY_MAX_BYTES_PER_PROJECT
                boolean unit =
                        s.unit().equals(suffix.getValue()) || s.unit().startsWith(suffix.getValue() + "/"); // bytes/s
                if (named != unit) {
                    problems.add(s.name() + " has unit '" + s.unit() + "': a name ending " + suffix.getKey()
                            + " and the unit " + suffix.getValue() + " go together");
                }
            }
        }
        return problems;
    }

    /** {@code doc} with the table of {@code section} rebuilt. */
    public static String withTable(String doc, String section, List<Setting<?>> settings) {
        String begin = "<!-- BEGIN GENERATED: " + section + " -->";
        String end = "<!-- END GENERATED: " + section + " -->";
        int b = doc.indexOf(begin);
        int e = doc.indexOf(end);
        if (b < 0 || e < b) {
            throw new AssertionError("docs/configuration.md lacks the markers " + begin + " ... " + end);
        }
        return doc.substring(0, b + begin.length()) + "\n" + table(settings) + doc.substring(e);
    }

    /** The markdown table: variable, default, unit, values allowed, meaning. */
    public static String table(List<Setting<?>> settings) {
        StringBuilder sb =
                new StringBuilder("| variable | default | unit | allowed | meaning |\n|---|---|---|---|---|\n");
        for (Setting<?> s : settings) {
            sb.append("| `")
                    .append(s.name())
                    .append("` | ")
                    .append(cell(s.isRequired() ? s.defaultDoc() : "`" + s.defaultDoc() + "`"))
                    .append(" | ")
                    .append(s.unit())
                    .append(" | ")
                    .append(cell(s.rangeDoc()))
                    .append(" | ")
                    .append(cell(s.doc()))
                    .append(" |\n");
        }
        return sb.toString();
    }

    private static String cell(String text) {
        return text.replace("|", "\\|");
    }
}
