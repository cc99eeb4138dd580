package dev.aura.realtime.cdc.decode;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.aura.realtime.common.wire.WireJson;
import java.math.BigDecimal;
import java.util.List;
import java.util.Set;

/**
 * Turns a wal2json value into the JSON value Supabase Realtime sends (what {@code to_jsonb}
 * would give): numbers exact, {@code json/jsonb} as JSON values, arrays as JSON arrays, bytea as
 * {@code \x...}, timestamps in ISO 8601 with {@code T}. Stateless and thread-safe.
 *
 * <p>wal2json prints numeric types unquoted (exact digits), {@code bool} as true/false, and
 * every other type as its text output in a JSON string; float {@code NaN}/{@code Infinity}
 * arrive as JSON {@code null} (wal2json writes null for non-finite floats), which we pass on.
 */
public final class ValueMapper {
    private static final JsonNodeFactory NODES = JsonNodeFactory.withExactBigDecimals(true);
    private static final Set<String> NUMERIC = Set.of("int2", "int4", "int8", "float4", "float8", "numeric", "oid");
    private final ObjectMapper mapper = WireJson.mapper();

    /** @param typname the column's {@code pg_type.typname} */
    public JsonNode toJson(String typname, JsonNode value) {
        if (value == null || value.isNull()) {
            return NODES.nullNode();
        }
        if (!value.isTextual()) {
            return value;
        }
        return fromText(typname, value.asText(), true);
    }

    private JsonNode fromText(String typname, String text, boolean topLevel) {
        if (typname.startsWith("_") && topLevel) {
            try {
                return array(typname.substring(1), PgArrayParser.parse(text, typname.equals("_box") ? ';' : ','));
            } catch (IllegalArgumentException e) {
                return TextNode.valueOf(text);
            }
        }
        switch (typname) {
            case "json", "jsonb" -> {
                try {
                    return mapper.readTree(text);
                } catch (Exception e) {
                    return TextNode.valueOf(text);
                }
            }
            case "bytea" -> {
                return TextNode.valueOf(text.startsWith("\\x") ? text : "\\x" + text);
            }
            case "timestamptz" -> {
                return TextNode.valueOf(isoTimestamptz(text));
            }
            case "timestamp" -> {
                return TextNode.valueOf(text.replace(' ', 'T'));
            }
            case "bool" -> {
                return "t".equals(text) || "true".equals(text)
                        ? NODES.booleanNode(true)
                        : "f".equals(text) || "false".equals(text) ? NODES.booleanNode(false) : TextNode.valueOf(text);
            }
            default -> {
                if (NUMERIC.contains(typname)) {
                    try {
                        return NODES.numberNode(new BigDecimal(text));
                    } catch (NumberFormatException e) {
                        return TextNode.valueOf(text); // NaN, Infinity inside arrays
                    }
                }
                return TextNode.valueOf(text);
            }
        }
    }

    private ArrayNode array(String elementType, List<Object> items) {
        ArrayNode out = NODES.arrayNode(items.size());
        for (Object item : items) {
            if (item == null) {
                out.addNull();
            } else if (item instanceof List<?> nested) {
                @SuppressWarnings("unchecked")
                List<Object> inner = (List<Object>) nested;
                out.add(array(elementType, inner));
            } else {
                out.add(fromText(elementType, (String) item, false));
            }
        }
        return out;
    }

    /** {@code 2026-01-02 03:04:05.123456+00} → {@code 2026-01-02T03:04:05.123456+00:00} (to_jsonb's form). */
    static String isoTimestamptz(String text) {
        String t = text.replace(' ', 'T');
        int plus = Math.max(t.lastIndexOf('+'), t.lastIndexOf('-'));
        if (plus > 10 && t.length() - plus == 3) {
            return t + ":00";
        }
        return t;
    }
}
