package dev.aura.realtime.cdc.control;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import dev.aura.realtime.cdc.catalog.ProjectCatalog;
import dev.aura.realtime.cdc.http.HttpApi;
import dev.aura.realtime.cdc.publish.ProjectStreams;
import dev.aura.realtime.common.auth.AuthException;
import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.common.auth.JwtVerifier;
import dev.aura.realtime.common.wire.WireJson;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The control API (docs/design.md C9), on the cdc-worker's HTTP port:
 * <ul>
 *   <li>{@code PUT /v1/db/{project_id}/schema/tables/{table}/realtime} with
 *       {@code {"enabled": true|false}}: enabling writes {@code realtime_tables} and sets
 *       {@code REPLICA IDENTITY FULL} (unless already set) in one transaction (wal2json needs it
 *       for complete UPDATE/DELETE rows); idempotent. 404 when the table does not exist in the
 *       project's schema, 422 when it has no primary key (wal2json would drop its UPDATE/DELETE
 *       and RLS checks need a key) or its name is longer than 63 bytes (Postgres would truncate
 *       it), 403 when the worker's login may not alter the table (Postgres's reason), 409 when the
 *       table stays locked for the lock timeout.
 *   <li>{@code GET /v1/db/{project_id}/realtime/tables}: the enabled tables.
 *   <li>{@code /v1/db/{project_id}/realtime/quarantine...}: the project's quarantine ({@link QuarantineApi}).
 * </ul>
 * Authorised by a {@code service_role} JWT of that project in the {@code apikey} header or
 * {@code Authorization: Bearer}; 401 otherwise. Errors are JSON {@code {"error": "..."}}; 503
 * only when the database fails otherwise.
 */
public final class ControlApi implements HttpHandler {
    private static final Logger log = LoggerFactory.getLogger(ControlApi.class);
    private static final Pattern PUT_PATH = Pattern.compile("^/v1/db/([^/]+)/schema/tables/([^/]+)/realtime/?$");
    private static final Pattern LIST_PATH = Pattern.compile("^/v1/db/([^/]+)/realtime/tables/?$");
    private static final Pattern QUARANTINE_PATH = Pattern.compile("^/v1/db/([^/]+)/realtime/quarantine(/[^/]*)?$");
    /** Postgres keeps identifiers up to NAMEDATALEN - 1 bytes and truncates longer ones. */
    private static final int MAX_NAME_BYTES = 63;

    private final ProjectCatalog projects;
    private final JwtVerifier jwt;
    private final Runnable onChange;
    private final Duration lockTimeout;
    private final QuarantineApi quarantine;
    private final ObjectMapper mapper = WireJson.mapper();

    /**
     * @param onChange run after a successful change (e.g. refresh the table cache at once)
     * @param lockTimeout how long enabling waits for the table's lock before answering 409
     * @param heldChanges the projects' quarantines (docs/design.md C13), null until made
     */
    public ControlApi(
            ProjectCatalog projects,
            JwtVerifier jwt,
            Runnable onChange,
            Duration lockTimeout,
            Supplier<ProjectStreams> heldChanges) {
        this.projects = projects;
        this.jwt = jwt;
        this.onChange = onChange;
        this.lockTimeout = lockTimeout;
        this.quarantine = new QuarantineApi(heldChanges);
    }

    @Override
    public void handle(HttpExchange ex) throws IOException {
        try {
            String path = ex.getRequestURI().getRawPath();
            Matcher put = PUT_PATH.matcher(path);
            Matcher list = LIST_PATH.matcher(path);
            Matcher held = QUARANTINE_PATH.matcher(path);
            if (held.matches()) {
                String project = decode(held.group(1));
                if (uuid(project) == null) {
                    error(ex, 404, "unknown project " + project);
                } else if (authorise(ex, project)) {
                    quarantine.handle(ex, project, held.group(2) == null ? "" : held.group(2));
                }
            } else if (put.matches()) {
                if (!"PUT".equals(ex.getRequestMethod())) {
                    error(ex, 405, "use PUT");
                    return;
                }
                String project = decode(put.group(1));
                if (authorise(ex, project)) {
                    setEnabled(ex, project, decode(put.group(2)));
                }
            } else if (list.matches()) {
                String project = decode(list.group(1));
                if (authorise(ex, project)) {
                    list(ex, project);
                }
            } else {
                error(ex, 404, "no such endpoint");
            }
        } catch (SQLException e) {
            if ("42501".equals(e.getSQLState())) {
                // Postgres's own words (e.g. "must be owner of table x"); no tenant text
                error(ex, 403, "the worker's database login may not change this table: " + e.getMessage());
            } else if ("55P03".equals(e.getSQLState())) {
                error(
                        ex,
                        409,
                        "the table is locked by another transaction (waited " + lockTimeout.toMillis()
                                + " ms); try again");
            } else {
                log.warn("[ControlApiDbFailed] control API database error: {}", e.getMessage());
                error(ex, 503, "database unavailable");
            }
        } catch (RuntimeException e) {
            log.error("[ControlApiFailed] control API failure", e);
            error(ex, 500, "internal error");
        }
    }

    private boolean authorise(HttpExchange ex, String project) throws IOException {
        String token = ex.getRequestHeaders().getFirst("apikey");
        String auth = ex.getRequestHeaders().getFirst("Authorization");
        if (auth != null && auth.regionMatches(true, 0, "Bearer ", 0, 7)) {
            token = auth.substring(7).trim();
        }
        if (token == null) {
            error(ex, 401, "API key is missing");
            return false;
        }
        try {
            Claims claims = jwt.verify(token);
            if (!claims.isServiceRole() || !claims.projectId().equals(project)) {
                error(ex, 401, "a service_role key of project " + project + " is required");
                return false;
            }
            return true;
        } catch (AuthException e) {
            error(ex, 401, e.reason());
            return false;
        }
    }

    private void setEnabled(HttpExchange ex, String project, String table) throws IOException, SQLException {
        JsonNode body;
        try {
            body = mapper.readTree(ex.getRequestBody());
        } catch (IOException e) {
            error(ex, 400, "body must be JSON {\"enabled\": true|false}");
            return;
        }
        if (body == null || !body.path("enabled").isBoolean()) {
            error(ex, 400, "body must be JSON {\"enabled\": true|false}");
            return;
        }
        boolean enabled = body.get("enabled").asBoolean();
        if (table.isEmpty() || table.indexOf('\u0000') >= 0) {
            error(ex, 422, "invalid table name");
            return;
        }
        if (table.getBytes(StandardCharsets.UTF_8).length > MAX_NAME_BYTES) {
            // Postgres would silently truncate it to 63 bytes, i.e. name another table
            error(ex, 422, "table name longer than " + MAX_NAME_BYTES + " bytes");
            return;
        }
        UUID projectId = uuid(project);
        if (projectId == null) {
            error(ex, 404, "unknown project " + project);
            return;
        }
        switch (projects.setRealtime(projectId, table, enabled, lockTimeout)) {
            case UNKNOWN_PROJECT -> {
                error(ex, 404, "unknown project " + project);
                return;
            }
            case NO_SUCH_TABLE -> {
                error(ex, 404, "table " + table + " does not exist");
                return;
            }
            case NO_PRIMARY_KEY -> {
                error(ex, 422, "table " + table + " has no primary key: add one before enabling realtime");
                return;
            }
            case DONE -> {}
        }
        log.info("realtime {} for {}.{}", enabled ? "enabled" : "disabled", project, table);
        onChange.run();
        ObjectNode out = mapper.createObjectNode()
                .put("project_id", project)
                .put("table", table)
                .put("enabled", enabled);
        HttpApi.send(ex, 200, "application/json", mapper.writeValueAsBytes(out));
    }

    private void list(HttpExchange ex, String project) throws IOException, SQLException {
        UUID projectId = uuid(project);
        ArrayNode tables = mapper.createArrayNode();
        if (projectId != null) {
            for (ProjectCatalog.RealtimeTable t : projects.enabledTables(projectId)) {
                tables.addObject()
                        .put("table", t.table())
                        .put("updated_at", t.updatedAt().toString());
            }
        }
        ObjectNode out = mapper.createObjectNode().put("project_id", project);
        out.set("tables", tables);
        HttpApi.send(ex, 200, "application/json", mapper.writeValueAsBytes(out));
    }

    private void error(HttpExchange ex, int status, String message) throws IOException {
        HttpApi.send(
                ex,
                status,
                "application/json",
                mapper.writeValueAsBytes(mapper.createObjectNode().put("error", message)));
    }

    private static UUID uuid(String text) {
        try {
            return UUID.fromString(text);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    private static String decode(String raw) {
        return URLDecoder.decode(raw.replace("+", "%2B"), StandardCharsets.UTF_8);
    }
}
