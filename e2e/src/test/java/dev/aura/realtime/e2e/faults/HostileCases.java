package dev.aura.realtime.e2e.faults;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Generates the hostile inputs of {@link HostileValuesE2EIT} from a seed (issue 36, docs/design.md
 * C13): every kind of value a tenant or its users control, at and past each limit the pipeline
 * knows of. Each case is SQL project A runs (its values built by SQL functions, so a 2 MB value is
 * a short statement) and what A's subscriber should then receive.
 */
final class HostileCases {
    /** What a case does. */
    enum Kind {
        /** A row of {@code vals} with one hostile value: A's {@code vals} subscriber gets it or its error. */
        ROW_VALUE,
        /** {@code realtime.send()} of a hostile payload, event or topic: a joinable topic's subscriber gets it or its error. */
        MESSAGE,
        /** A table or column with a hostile name, enabled, subscribed, written. */
        NAMES,
        /** A postgres_changes join with a hostile filter, then a row. */
        FILTER
    }

    /**
     * One case.
     *
     * @param sql what project A runs (its transaction may fail: Postgres refused the value)
     * @param topic for a MESSAGE case whose topic a client can join, the topic; else null
     * @param table for a NAMES case, the table's name; else null
     * @param filter for a FILTER case, the filter text
     */
    record Case(int n, Kind kind, String what, List<String> sql, String topic, String table, String filter) {}

    /** The columns of A's {@code vals} table, by type. */
    static final String VALS_COLUMNS = "(id int PRIMARY KEY, f text, n numeric, j json, jb jsonb, t text, b bytea,"
            + " ia int[], ta text[], e hostile_enum, ts timestamptz, d float8, iv interval, ip inet, tv tsvector)";

    /** Enum labels a tenant may choose: quotes, backslashes, a 63-byte label, emoji, a dot, an empty one. */
    static final List<String> ENUM_LABELS = List.of(
            "plain",
            "'quoted'",
            "back\\\\slash",
            "x".repeat(63),
            "\u00e9\u00e8\u4e2d\uD83D\uDE00",
            "a.b>c*",
            "",
            "\"dq\"");

    private final Random random;
    private int n;

    HostileCases(long seed) {
        this.random = new Random(seed);
    }

    Case next() {
        n++;
        int pick = random.nextInt(100);
        if (pick < 55) {
            return rowValue();
        }
        if (pick < 85) {
            return message();
        }
        if (pick < 93) {
            return filter();
        }
        return names();
    }

    private Case rowValue() {
        String[] c = switch (random.nextInt(16)) {
            case 0 -> numeric();
            case 1 -> nestedJson("j", "json");
            case 2 -> nestedJson("jb", "jsonb");
            case 3 -> longText();
            case 4 ->
                new String[] {"b", "decode(repeat('00ff', " + sizeUpTo(600_000) + "), 'hex')", "bytea with NUL bytes"};
            case 5 ->
                new String[] {
                    "ia", "array_fill(" + random.nextInt() + ", ARRAY[" + sizeUpTo(200_000) + "])", "long int[]"
                };
            case 6 ->
                new String[] {
                    "ta",
                    "ARRAY[ARRAY['" + sqlText(weirdText(30)) + "', NULL], ARRAY['\\\\', '\"']]",
                    "2-d text[] with escapes"
                };
            case 7 ->
                new String[] {
                    "e",
                    "'" + sqlText(ENUM_LABELS.get(random.nextInt(ENUM_LABELS.size()))) + "'::hostile_enum",
                    "hostile enum label"
                };
            case 8 ->
                new String[] {
                    "ts",
                    pickOf("'infinity'", "'-infinity'", "'epoch'", "'294276-12-31 23:59:59+00'"),
                    "extreme timestamptz"
                };
            case 9 ->
                new String[] {
                    "d", pickOf("'NaN'", "'Infinity'", "'-Infinity'", "'-0'", "1e308", "4.9e-324"), "special float8"
                };
            case 10 ->
                new String[] {
                    "j",
                    pickOf(
                            "'\"\\\\u0000\"'::json",
                            "'\"\\\\ud83d\\\\ude00\"'::json",
                            "'{\"a\":1,\"a\":2}'::json",
                            "'  [1 ,  2 ]  '::json"),
                    "json escapes and duplicate keys"
                };
            case 11 ->
                new String[] {
                    "iv", pickOf("'178000000 years'", "'-178000000 years'", "'1 microsecond'"), "extreme interval"
                };
            case 12 ->
                new String[] {
                    "tv",
                    "to_tsvector('simple', repeat('" + sqlText(weirdText(10)) + " ', " + sizeUpTo(20_000) + "))",
                    "big tsvector"
                };
            case 13 ->
                new String[] {
                    "jb",
                    "jsonb_build_object('" + sqlText(weirdText(40)) + "', repeat('x', " + sizeUpTo(2_500_000) + "))",
                    "jsonb with a huge string under a weird key"
                };
            case 14 -> new String[] {"ip", pickOf("'::ffff:1.2.3.4'", "'0.0.0.0/0'", "'ffff::/16'"), "inet"};
            default ->
                new String[] {
                    "jb",
                    "(SELECT jsonb_agg(g) FROM generate_series(1, " + sizeUpTo(100_000) + ") g)",
                    "long jsonb array"
                };
        };
        String sql = "INSERT INTO %VALS% (id, " + c[0] + ") VALUES (" + n + ", " + c[1] + ")";
        return new Case(n, Kind.ROW_VALUE, c[2] + " in " + c[0], List.of(sql), null, null, null);
    }

    private String[] numeric() {
        int digits = pickInt(1_000, 1_001, 1_002, 131_072, 1 + random.nextInt(131_072));
        int fraction = random.nextBoolean() ? 0 : pickInt(1, 16_383, 1 + random.nextInt(16_383));
        String value = (random.nextBoolean() ? "-" : "") + "repeat('9', " + digits + ")"
                + (fraction > 0 ? " || '.' || repeat('1', " + fraction + ")" : "");
        return new String[] {
            "n", "(" + value.replace("-repeat", "'-' || repeat") + ")::numeric", digits + "-digit numeric"
        };
    }

    private String[] nestedJson(String column, String type) {
        int depth = pickInt(999, 1_000, 1_001, 1_100, 4_095, 4_096, 4_097, 5_000, 12_000, 1 + random.nextInt(6_000));
        boolean objects = random.nextBoolean();
        String open = objects ? "{\"k\":" : "[";
        String close = objects ? "}" : "]";
        return new String[] {
            column,
            "(repeat('" + open + "', " + depth + ") || '1' || repeat('" + close + "', " + depth + "))::" + type,
            type + " nested " + depth + " levels"
        };
    }

    private String[] longText() {
        int length = pickInt(0, 64, 65, 100_000, 1_048_576, 2_200_000, sizeUpTo(1_500_000));
        String unit = sqlText(weirdText(1 + random.nextInt(8)));
        return new String[] {
            "t",
            "left(repeat('" + unit + "', " + (length + 1) + "), " + length + ")",
            "text of " + length + " characters"
        };
    }

    private Case message() {
        String topic;
        String expectTopic;
        switch (random.nextInt(6)) {
            case 0 -> topic = "t" + "\u00e9".repeat(pickInt(254, 1_399, 2_000));
            case 1 -> topic = "h-" + weirdText(1 + random.nextInt(40));
            case 2 -> topic = "x".repeat(pickInt(255, 256, 5_000));
            case 3 -> topic = pickOf("a.b.c", ">", "*", "a b", "~", "%2E", "room:1", "realtime:room");
            case 4 -> topic = "";
            default -> topic = "h-" + n;
        }
        boolean joinable = !topic.isEmpty()
                && topic.getBytes(java.nio.charset.StandardCharsets.UTF_8).length <= 255
                && topic.indexOf('\u0000') < 0;
        expectTopic = joinable ? topic : null;
        String event = switch (random.nextInt(4)) {
            case 0 -> "e".repeat(pickInt(1, 255, 10_000));
            case 1 -> weirdText(12);
            default -> "ev-" + n;
        };
        String payload = switch (random.nextInt(7)) {
            case 0 -> nestedJson("p", "jsonb")[1];
            case 1 -> "jsonb_build_object('n', " + numeric()[1] + ")";
            case 2 -> "jsonb_build_object('s', repeat('" + sqlText(weirdText(3)) + "', " + sizeUpTo(400_000) + "))";
            case 3 -> "'null'::jsonb";
            case 4 -> "NULL";
            case 5 -> "jsonb_build_object('" + sqlText(weirdText(20)) + "', '" + sqlText(weirdText(20)) + "')";
            default -> "'{\"n\": " + n + "}'::jsonb";
        };
        String sql;
        String what;
        if (random.nextInt(6) == 0) {
            sql = "SELECT %RT%.send_binary(decode(repeat('00', " + sizeUpTo(300_000) + "), 'hex'), '" + sqlText(event)
                    + "', '" + sqlText(topic) + "', false)";
            what = "send_binary to a " + topic.length() + "-character topic";
        } else {
            sql = "SELECT %RT%.send(" + payload + ", '" + sqlText(event) + "', '" + sqlText(topic) + "', false)";
            what = "send to a " + topic.length() + "-character topic, event of " + event.length() + " characters";
        }
        return new Case(n, Kind.MESSAGE, what, List.of(sql), expectTopic, null, null);
    }

    private Case filter() {
        String value = switch (random.nextInt(6)) {
            case 0 -> "x".repeat(pickInt(100, 10_000));
            case 1 -> weirdText(20);
            case 2 -> "(" + "1,".repeat(pickInt(10, 101, 1_000)) + "1)";
            case 3 -> "9".repeat(pickInt(1_000, 1_001, 200_000));
            case 4 -> "'; drop table x; --";
            default -> "\u0000";
        };
        String op = pickOf("eq", "neq", "lt", "gte", "in", "like", "ilike", "is", "xx");
        String column = pickOf("f", "n", "t", "jb", "e", "nope", "id");
        return new Case(
                n,
                Kind.FILTER,
                "filter " + column + "=" + op + ".<" + value.length() + " chars>",
                List.of(),
                null,
                null,
                column + "=" + op + "." + value);
    }

    private Case names() {
        String table = switch (random.nextInt(5)) {
            case 0 -> "t\"q" + n;
            case 1 -> "t" + n + "-" + "\u00e9".repeat(20);
            case 2 -> ("t" + n + "_" + "x".repeat(63)).substring(0, 63);
            case 3 -> "t" + n + ".dot>star*";
            default -> "t " + n + " \\";
        };
        String column = pickOf("c", "c\"q", "\u00e9\u00e8", "col.umn", "x".repeat(63), "select");
        String q = "\"" + table.replace("\"", "\"\"") + "\"";
        String qc = "\"" + column.replace("\"", "\"\"") + "\"";
        List<String> sql = new ArrayList<>();
        sql.add("CREATE TABLE %S%." + q + " (id int PRIMARY KEY, " + qc + " text)");
        sql.add("GRANT SELECT ON %S%." + q + " TO aura_anon, aura_authenticated");
        return new Case(
                n, Kind.NAMES, "table " + table.length() + " chars, column " + column.length(), sql, null, table, qc);
    }

    /** Text with what escaping, encoding and quoting trip on: quotes, backslashes, controls, multi-byte, emoji. */
    String weirdText(int length) {
        String[] pieces = {
            "'",
            "\"",
            "\\",
            "\u0001",
            "\u001f",
            "\t",
            "\n",
            "\u00e9",
            "\u4e2d",
            "\uD83D\uDE00",
            "%",
            "_",
            "*",
            ">",
            ".",
            " ",
            "\u202e",
            "\ufeff",
            "<script>",
            "${x}",
            "a"
        };
        StringBuilder s = new StringBuilder();
        while (s.length() < length) {
            s.append(pieces[random.nextInt(pieces.length)]);
        }
        return s.toString();
    }

    /** A SQL string literal's content: quotes doubled (standard_conforming_strings is on). */
    static String sqlText(String s) {
        return s.replace("'", "''");
    }

    private int sizeUpTo(int max) {
        return random.nextInt(4) == 0 ? max : 1 + random.nextInt(max);
    }

    private int pickInt(int... options) {
        return options[random.nextInt(options.length)];
    }

    private String pickOf(String... options) {
        return options[random.nextInt(options.length)];
    }
}
