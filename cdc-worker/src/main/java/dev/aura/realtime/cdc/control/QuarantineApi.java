package dev.aura.realtime.cdc.control;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import dev.aura.realtime.cdc.failure.CdcFailure;
import dev.aura.realtime.cdc.http.HttpApi;
import dev.aura.realtime.cdc.publish.ProjectStreams;
import dev.aura.realtime.common.wire.WireJson;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A project's quarantine for its admins and operators (docs/operations.md, "Quarantine";
 * docs/design.md C13), under the control API's {@code /v1/db/{project_id}/realtime/quarantine}:
 *
 * <ul>
 *   <li>{@code GET ...quarantine[?from=<seq>&limit=<n>]}: the entries (sequence, event id, table,
 *       fault, stage, our words, when, bytes) and the stream's totals;
 *   <li>{@code GET ...quarantine/<seq>}: one entry with its {@code raw} wal2json row;
 *   <li>{@code POST ...quarantine/republish} {@code {"from": <seq>, "to": <seq>, "remove": true}}:
 *       the entries go through the project's late lane again (built, matched, checked and
 *       published as when they were read; a change that fails again is quarantined again), and
 *       with {@code remove} they leave the quarantine.
 * </ul>
 *
 * The raw row is the project's own data, shown only to a {@code service_role} key of the project
 * (the control API's authorisation).
 */
final class QuarantineApi {
    private static final Logger log = LoggerFactory.getLogger(QuarantineApi.class);
    private static final int MAX_LIMIT = 1000;

    private final Supplier<ProjectStreams> streams;
    private final ObjectMapper mapper = WireJson.mapper();

    /** @param streams the projects' held-change streams (null until start-up made them) */
    QuarantineApi(Supplier<ProjectStreams> streams) {
        this.streams = streams;
    }

    /** @param rest what follows {@code quarantine} in the path: empty, {@code /<seq>} or {@code /republish} */
    void handle(HttpExchange ex, String project, String rest) throws IOException {
        ProjectStreams s = streams.get();
        if (s == null) {
            error(ex, 503, "the worker is starting");
            return;
        }
        try {
            if (rest.isEmpty() || rest.equals("/")) {
                if (!method(ex, "GET")) {
                    return;
                }
                list(ex, s, project);
            } else if (rest.equals("/republish")) {
                if (!method(ex, "POST")) {
                    return;
                }
                republish(ex, s, project);
            } else {
                if (!method(ex, "GET")) {
                    return;
                }
                long seq = number(rest.substring(1), -1);
                ProjectStreams.Stored e = seq < 1 ? null : s.one(ProjectStreams.Kind.QUARANTINE, project, seq);
                if (e == null) {
                    error(ex, 404, "no quarantined change at " + rest.substring(1));
                    return;
                }
                ObjectNode out = entry(e);
                out.put("raw", e.change().raw().text());
                HttpApi.send(ex, 200, "application/json", mapper.writeValueAsBytes(out));
            }
        } catch (CdcFailure e) {
            log.warn("[ControlApiFailed] quarantine of project {}: {}", project, e.getMessage());
            error(ex, 503, "NATS unavailable");
        }
    }

    private void list(HttpExchange ex, ProjectStreams s, String project) throws IOException, CdcFailure {
        String query = ex.getRequestURI().getRawQuery();
        long from = number(param(query, "from"), 1);
        int limit = (int) Math.min(MAX_LIMIT, Math.max(1, number(param(query, "limit"), 100)));
        ProjectStreams.State state = s.state(ProjectStreams.Kind.QUARANTINE, project);
        List<ProjectStreams.Stored> got = s.read(ProjectStreams.Kind.QUARANTINE, project, from, limit);
        ObjectNode out = mapper.createObjectNode().put("project_id", project);
        out.put("stream", ProjectStreams.streamName(ProjectStreams.Kind.QUARANTINE, project));
        out.put("changes", state == null ? 0 : state.messages());
        out.put("bytes", state == null ? 0 : state.bytes());
        ArrayNode entries = out.putArray("entries");
        got.forEach(e -> entries.add(entry(e)));
        if (!got.isEmpty() && got.size() == limit) {
            out.put("next", got.get(got.size() - 1).lastSeq() + 1);
        } else {
            out.putNull("next");
        }
        HttpApi.send(ex, 200, "application/json", mapper.writeValueAsBytes(out));
    }

    private void republish(HttpExchange ex, ProjectStreams s, String project) throws IOException, CdcFailure {
        JsonNode body;
        try {
            body = mapper.readTree(ex.getRequestBody().readNBytes(64 * 1024));
        } catch (IOException e) {
            body = null;
        }
        if (body == null || !body.isObject()) {
            error(ex, 400, "body must be JSON {\"from\": <seq>, \"to\": <seq>, \"remove\": true|false}");
            return;
        }
        long from = Math.max(1, body.path("from").asLong(1));
        long to = body.path("to").asLong(Long.MAX_VALUE);
        boolean remove = body.path("remove").asBoolean(false);
        int n = 0;
        long seq = from;
        while (seq <= to) {
            List<ProjectStreams.Stored> got = s.read(ProjectStreams.Kind.QUARANTINE, project, seq, 100);
            if (got.isEmpty()) {
                break;
            }
            for (ProjectStreams.Stored e : got) {
                if (e.seq() > to) {
                    break;
                }
                // its own message id: the lane stored this event id before, maybe within the duplicate window
                s.store(ProjectStreams.Kind.LATE, e.change(), null, "@q" + e.seq())
                        .join();
                if (remove) {
                    s.delete(ProjectStreams.Kind.QUARANTINE, project, e.seq(), e.lastSeq());
                }
                n++;
                seq = e.lastSeq() + 1;
            }
            if (got.get(got.size() - 1).seq() > to) {
                break;
            }
        }
        log.info("project {}: {} quarantined changes re-published through its late lane", project, n);
        HttpApi.send(
                ex,
                202,
                "application/json",
                mapper.writeValueAsBytes(mapper.createObjectNode().put("republished", n)));
    }

    private ObjectNode entry(ProjectStreams.Stored e) {
        ObjectNode o = mapper.createObjectNode();
        o.put("seq", e.seq());
        o.put("event_id", e.change().eventId());
        o.put("table", e.change().table());
        o.put("commit_timestamp", e.change().commitTimestamp());
        if (e.why() != null) {
            o.put("fault", e.why().fault().code());
            o.put("error", e.why().fault().clientError());
            o.put("stage", e.why().stage());
            o.put("detail", e.why().detail());
        }
        o.put(
                "stored_at",
                e.storedAt() == null ? null : e.storedAt().toInstant().toString());
        o.put("bytes", e.bytes());
        return o;
    }

    private boolean method(HttpExchange ex, String wanted) throws IOException {
        if (wanted.equals(ex.getRequestMethod())) {
            return true;
        }
        error(ex, 405, "use " + wanted);
        return false;
    }

    private static String param(String query, String name) {
        if (query == null) {
            return null;
        }
        for (String kv : query.split("&")) {
            int eq = kv.indexOf('=');
            if (eq > 0 && kv.substring(0, eq).equals(name)) {
                return java.net.URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8);
            }
        }
        return null;
    }

    private static long number(String text, long otherwise) {
        if (text == null) {
            return otherwise;
        }
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            return otherwise;
        }
    }

    private void error(HttpExchange ex, int status, String message) throws IOException {
        HttpApi.send(
                ex,
                status,
                "application/json",
                mapper.writeValueAsBytes(mapper.createObjectNode().put("error", message)));
    }
}
