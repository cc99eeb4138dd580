package dev.aura.realtime.cdc.decode;

import java.util.ArrayList;
import java.util.List;

/**
 * Parses the text form of a Postgres array ({@code array_out}): {@code {a,"b c",NULL,{1,2}}}.
 * Elements are returned as strings, {@code null} for an unquoted {@code NULL}, or nested lists.
 * An optional dimension prefix ({@code [0:1]={...}}) is skipped. Delimiter is {@code ,} (every
 * built-in type except {@code box}, whose arrays use {@code ;}).
 */
public final class PgArrayParser {
    private final String text;
    private final char delimiter;
    private int pos;

    private PgArrayParser(String text, char delimiter) {
        this.text = text;
        this.delimiter = delimiter;
    }

    /**
     * @throws IllegalArgumentException when the text is not an array literal
     */
    public static List<Object> parse(String text, char delimiter) {
        PgArrayParser p = new PgArrayParser(text, delimiter);
        if (!text.isEmpty() && text.charAt(0) == '[') {
            int eq = text.indexOf('=');
            if (eq < 0) {
                throw new IllegalArgumentException("bad array dimensions: " + text);
            }
            p.pos = eq + 1;
        }
        List<Object> out = p.array();
        if (p.pos != text.length()) {
            throw new IllegalArgumentException("trailing characters in array literal: " + text);
        }
        return out;
    }

    private List<Object> array() {
        expect('{');
        List<Object> items = new ArrayList<>();
        if (peek() == '}') {
            pos++;
            return items;
        }
        while (true) {
            char c = peek();
            if (c == '{') {
                items.add(array());
            } else if (c == '"') {
                items.add(quoted());
            } else {
                items.add(unquoted());
            }
            char next = next();
            if (next == '}') {
                return items;
            }
            if (next != delimiter) {
                throw new IllegalArgumentException(
                        "expected '" + delimiter + "' or '}' at " + (pos - 1) + " in " + text);
            }
        }
    }

    private String quoted() {
        expect('"');
        StringBuilder sb = new StringBuilder();
        while (true) {
            char c = next();
            if (c == '\\') {
                sb.append(next());
            } else if (c == '"') {
                return sb.toString();
            } else {
                sb.append(c);
            }
        }
    }

    private String unquoted() {
        int start = pos;
        while (pos < text.length() && text.charAt(pos) != delimiter && text.charAt(pos) != '}') {
            pos++;
        }
        String raw = text.substring(start, pos).trim();
        return raw.equalsIgnoreCase("NULL") ? null : raw;
    }

    private char peek() {
        if (pos >= text.length()) {
            throw new IllegalArgumentException("unterminated array literal: " + text);
        }
        return text.charAt(pos);
    }

    private char next() {
        char c = peek();
        pos++;
        return c;
    }

    private void expect(char c) {
        if (next() != c) {
            throw new IllegalArgumentException("expected '" + c + "' at " + (pos - 1) + " in " + text);
        }
    }
}
