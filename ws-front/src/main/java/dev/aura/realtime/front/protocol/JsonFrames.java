package dev.aura.realtime.front.protocol;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.common.wire.WireJson;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufInputStream;
import io.netty.buffer.ByteBufOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * JSON text frames of both serializer versions.
 *
 * <ul>
 *   <li>vsn 1.0.0: {@code {"topic","event","payload","ref","join_ref"}}; the server writes
 *       {@code {"topic","event","payload","ref"}} like Phoenix's V1 serializer (no join_ref);
 *   <li>vsn 2.0.0: {@code [join_ref, ref, topic, event, payload]} both ways.
 * </ul>
 *
 * Thread-safe; one instance per server.
 */
public final class JsonFrames {
    private final ObjectMapper mapper;
    private final JsonFactory factory;
    private final JoinDecoder joins;

    /** @param maxBindingsPerJoin postgres_changes bindings one join may have ({@link JoinDecoder}) */
    public JsonFrames(ObjectMapper mapper, int maxBindingsPerJoin) {
        this.mapper = mapper;
        this.factory = mapper.getFactory();
        this.joins = new JoinDecoder(maxBindingsPerJoin);
    }

    /**
     * A join that did not come as a frame (the SSE endpoint's), typed like a {@code phx_join} frame's.
     *
     * @param payload the join object ({@code config}, {@code access_token})
     */
    public PhoenixMessage.Join join(String joinRef, String ref, String topic, ObjectNode payload, String lastEventId) {
        return joins.join(joinRef, ref, topic, payload, lastEventId);
    }

    public ObjectMapper mapper() {
        return mapper;
    }

    /** Decodes one text frame; never throws, a bad frame becomes {@link PhoenixMessage.Malformed}. */
    public PhoenixMessage.Inbound decode(ByteBuf text, Vsn vsn) {
        JsonNode root;
        try (JsonParser parser = factory.createParser((java.io.InputStream) new ByteBufInputStream(text.duplicate()))) {
            root = mapper.readTree(parser);
            if (parser.nextToken() != null) {
                return new PhoenixMessage.Malformed(null, null, null, "trailing data after the JSON frame");
            }
        } catch (StreamConstraintsException e) {
            return overLimit(text, vsn, e);
        } catch (IOException | RuntimeException e) {
            return new PhoenixMessage.Malformed(null, null, null, "invalid JSON");
        }
        String joinRef;
        String ref;
        JsonNode topic;
        JsonNode event;
        JsonNode payload;
        if (vsn == Vsn.V2) {
            if (!(root instanceof ArrayNode a) || a.size() != 5) {
                return new PhoenixMessage.Malformed(
                        null, null, null, "expected [join_ref, ref, topic, event, payload]");
            }
            joinRef = refText(a.get(0));
            ref = refText(a.get(1));
            topic = a.get(2);
            event = a.get(3);
            payload = a.get(4);
        } else {
            if (!(root instanceof ObjectNode o)) {
                return new PhoenixMessage.Malformed(null, null, null, "expected a JSON object");
            }
            joinRef = refText(o.get("join_ref"));
            ref = refText(o.get("ref"));
            topic = o.get("topic");
            event = o.get("event");
            payload = o.get("payload");
        }
        if (topic == null || !topic.isTextual()) {
            return new PhoenixMessage.Malformed(joinRef, ref, null, "topic must be a string");
        }
        if (event == null || !event.isTextual()) {
            return new PhoenixMessage.Malformed(joinRef, ref, topic.asText(), "event must be a string");
        }
        return Inbounds.of(
                mapper,
                joins,
                joinRef,
                ref,
                topic.asText(),
                event.asText(),
                payload == null ? NullNode.getInstance() : payload);
    }

    /** Reads only the frame's refs and topic, at any depth (no tree): for the reply to a frame over a limit. */
    private static final JsonFactory REFS = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxNestingDepth(Integer.MAX_VALUE)
                    .maxNumberLength(Integer.MAX_VALUE)
                    .maxStringLength(Integer.MAX_VALUE)
                    .build())
            .build();

    /**
     * A frame over a JSON limit (nested past what the pipeline carries, a number or string too long,
     * docs/design.md C13) is told to its sender with its refs, so a pushed message gets its error
     * reply instead of a timeout.
     */
    private static PhoenixMessage.Malformed overLimit(ByteBuf text, Vsn vsn, StreamConstraintsException e) {
        String why = String.valueOf(e.getOriginalMessage()).startsWith("Document nesting depth")
                ? "the payload is nested deeper than " + WireJson.MAX_VALUE_NESTING + " levels"
                : "a value of the payload is longer than the limits allow";
        String joinRef = null;
        String ref = null;
        String topic = null;
        try (JsonParser p = REFS.createParser((java.io.InputStream) new ByteBufInputStream(text.duplicate()))) {
            if (vsn == Vsn.V2) {
                if (p.nextToken() == JsonToken.START_ARRAY) {
                    String[] first = new String[3];
                    for (int i = 0; i < 3; i++) {
                        JsonToken t = p.nextToken();
                        first[i] = t != null && t.isScalarValue() && t != JsonToken.VALUE_NULL ? p.getText() : null;
                    }
                    joinRef = first[0];
                    ref = first[1];
                    topic = first[2];
                }
            } else if (p.nextToken() == JsonToken.START_OBJECT) {
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String field = p.currentName();
                    JsonToken t = p.nextToken();
                    String value = t.isScalarValue() && t != JsonToken.VALUE_NULL ? p.getText() : null;
                    switch (field) {
                        case "join_ref" -> joinRef = value;
                        case "ref" -> ref = value;
                        case "topic" -> topic = value;
                        default -> p.skipChildren();
                    }
                }
            }
        } catch (IOException | RuntimeException ignored) {
            // what was read before is used; without a ref there is no one to reply to
        }
        return new PhoenixMessage.Malformed(joinRef, ref, topic, why);
    }

    /** Encodes a reply or push as a text frame body for {@code vsn}. */
    public ByteBuf encode(PhoenixMessage.Outbound message, Vsn vsn, ByteBufAllocator alloc) {
        return switch (message) {
            case PhoenixMessage.Reply r ->
                frame(alloc, vsn, r.joinRef(), r.ref(), r.topic(), "phx_reply", g -> {
                    g.writeStartObject();
                    g.writeStringField("status", r.status());
                    g.writeFieldName("response");
                    writeTree(g, r.response());
                    g.writeEndObject();
                });
            case PhoenixMessage.Push p ->
                frame(alloc, vsn, p.joinRef(), p.ref(), p.topic(), p.event(), g -> writeTree(g, p.payload()));
        };
    }

    /**
     * A text frame for a server push whose payload is given as ready JSON bytes, so one
     * serialisation of a large payload is shared by every recipient.
     *
     * @param payloadPrefix JSON written before {@code shared}, e.g. {@code {"ids":[1],"data":}}
     * @param shared ready JSON bytes (not copied, not released)
     * @param payloadSuffix JSON written after {@code shared}, e.g. <code>}</code>
     */
    public ByteBuf encodeWithSharedPayload(
            Vsn vsn,
            String topic,
            String event,
            String payloadPrefix,
            ByteBuf shared,
            String payloadSuffix,
            ByteBufAllocator alloc) {
        String head;
        String tail;
        if (vsn == Vsn.V2) {
            head = "[null,null," + quote(topic) + "," + quote(event) + "," + payloadPrefix;
            tail = payloadSuffix + "]";
        } else {
            head = "{\"topic\":" + quote(topic) + ",\"event\":" + quote(event) + ",\"payload\":" + payloadPrefix;
            tail = payloadSuffix + ",\"ref\":null}";
        }
        byte[] h = head.getBytes(StandardCharsets.UTF_8);
        byte[] t = tail.getBytes(StandardCharsets.UTF_8);
        ByteBuf out = alloc.buffer(h.length + shared.readableBytes() + t.length);
        out.writeBytes(h)
                .writeBytes(shared, shared.readerIndex(), shared.readableBytes())
                .writeBytes(t);
        return out;
    }

    /** Quotes and escapes a string as a JSON string literal. */
    public String quote(String s) {
        try {
            return mapper.writeValueAsString(s);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Body writer for {@link #frame}. */
    @FunctionalInterface
    interface PayloadWriter {
        void write(JsonGenerator g) throws IOException;
    }

    ByteBuf frame(
            ByteBufAllocator alloc,
            Vsn vsn,
            String joinRef,
            String ref,
            String topic,
            String event,
            PayloadWriter payload) {
        ByteBuf out = alloc.buffer(128);
        boolean ok = false;
        try (OutputStream os = new ByteBufOutputStream(out);
                JsonGenerator g = factory.createGenerator(os)) {
            if (vsn == Vsn.V2) {
                g.writeStartArray();
                g.writeString(joinRef);
                g.writeString(ref);
                g.writeString(topic);
                g.writeString(event);
                payload.write(g);
                g.writeEndArray();
            } else {
                g.writeStartObject();
                g.writeStringField("topic", topic);
                g.writeStringField("event", event);
                g.writeFieldName("payload");
                payload.write(g);
                g.writeStringField("ref", ref);
                g.writeEndObject();
            }
            ok = true;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            if (!ok) {
                out.release();
            }
        }
        return out;
    }

    void writeTree(JsonGenerator g, JsonNode node) throws IOException {
        if (node == null) {
            g.writeNull();
        } else {
            mapper.writeTree(g, node);
        }
    }

    /** Checks that {@code bytes} hold exactly one JSON value. */
    public boolean isSingleJsonValue(byte[] bytes) {
        try (JsonParser p = factory.createParser(bytes)) {
            JsonToken t = p.nextToken();
            if (t == null) {
                return false;
            }
            p.skipChildren();
            return p.nextToken() == null;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private static String refText(JsonNode node) {
        if (node == null || node.isNull()) {
            return null;
        }
        return node.isValueNode() ? node.asText() : null;
    }
}
