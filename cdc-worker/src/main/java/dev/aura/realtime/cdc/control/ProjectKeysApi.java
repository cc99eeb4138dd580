package dev.aura.realtime.cdc.control;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import dev.aura.realtime.cdc.catalog.ProjectKeysTable;
import dev.aura.realtime.cdc.failure.LogCode;
import dev.aura.realtime.cdc.http.HttpApi;
import dev.aura.realtime.common.auth.ApiKeys;
import dev.aura.realtime.common.auth.AuthException;
import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.common.auth.JwtVerifier;
import dev.aura.realtime.common.wire.WireJson;
import java.io.IOException;
import java.io.InputStream;
import java.sql.SQLException;
import java.time.Instant;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The control API of each project's own keys (docs/security.md "Each project's own keys"), on the
 * cdc-worker's HTTP port beside {@link ControlApi}, shaped as Supabase's Management API:
 *
 * <ul>
 *   <li>{@code GET /v1/projects/{id}/api-keys}: the project's keys (id, type, name, prefix,
 *       {@code inserted_at}, {@code revoked_at}), never a key or its hash;
 *   <li>{@code POST /v1/projects/{id}/api-keys} {@code {"type": "publishable"|"secret", "name": ...}}:
 *       201 with the new key in {@code api_key}, shown this once (only its SHA-256 is stored);
 *   <li>{@code DELETE /v1/projects/{id}/api-keys/{key id}}: revokes it (ws-front refuses it and
 *       closes its sockets within {@code PROJECT_KEYS_CACHE_SECONDS});
 *   <li>{@code GET /v1/projects/{id}/token-issuers}: the project's token issuers;
 *   <li>{@code PUT /v1/projects/{id}/token-issuers} {@code {"issuer", "audience"?, "jwks_url"?, "jwks"?}}:
 *       creates the issuer, or replaces its audience and keys; 409 when another project has it
 *       (an issuer is one project's);
 *   <li>{@code DELETE /v1/projects/{id}/token-issuers/{issuer id}}.
 * </ul>
 *
 * Authorised by a {@code service_role} JWT of that project signed with the platform's keys
 * ({@code AURA_JWT_*}), in {@code Authorization: Bearer} or {@code apikey}: a project's own API key
 * or token never manages keys, so a leaked key cannot mint itself successors. Errors are
 * {@code {"error": "..."}}; 503 when the database fails.
 */
public final class ProjectKeysApi implements HttpHandler {
    private static final Logger log = LoggerFactory.getLogger(ProjectKeysApi.class);
    private static final Pattern PATH =
            Pattern.compile("^/v1/projects/([^/]+)/(api-keys|token-issuers)(?:/([^/]+))?/?$");
    private static final int MAX_BODY_BYTES = 256 * 1024;
    private static final int MAX_NAME_CHARS = 200;

    private final ProjectKeysTable table;
    private final JwtVerifier platformKeys;
    private final ObjectMapper mapper = WireJson.mapper();

    /** @param platformKeys the platform's keys ({@code AURA_JWT_*}), which alone authorise this API */
    public ProjectKeysApi(ProjectKeysTable table, JwtVerifier platformKeys) {
        this.table = table;
        this.platformKeys = platformKeys;
    }

    @Override
    public void handle(HttpExchange ex) throws IOException {
        try {
            Matcher m = PATH.matcher(ex.getRequestURI().getRawPath());
            if (!m.matches()) {
                error(ex, 404, "no such endpoint");
                return;
            }
            UUID project = uuid(m.group(1));
            if (!authorised(ex, m.group(1))) {
                return;
            }
            if (project == null) {
                error(ex, 404, "unknown project " + m.group(1));
                return;
            }
            String method = ex.getRequestMethod();
            String item = m.group(3);
            boolean keys = m.group(2).equals("api-keys");
            if (item != null) {
                if (!"DELETE".equals(method)) {
                    error(ex, 405, "use DELETE");
                } else if (keys) {
                    revokeKey(ex, project, uuid(item));
                } else {
                    deleteIssuer(ex, project, uuid(item));
                }
            } else if ("GET".equals(method)) {
                if (keys) {
                    listKeys(ex, project);
                } else {
                    IssuerRequests.list(ex, mapper, table.issuers(project));
                }
            } else if (keys && "POST".equals(method)) {
                createKey(ex, project);
            } else if (!keys && "PUT".equals(method)) {
                IssuerRequests.put(ex, mapper, table, project, body(ex));
            } else {
                error(ex, 405, keys ? "use GET or POST" : "use GET or PUT");
            }
        } catch (SQLException e) {
            log.warn("[{}] project keys API database error: {}", LogCode.CONTROL_API_DB_FAILED, e.getMessage());
            error(ex, 503, "database unavailable");
        } catch (RuntimeException e) {
            log.error("[{}] project keys API failure", LogCode.CONTROL_API_FAILED, e);
            error(ex, 500, "internal error");
        }
    }

    private boolean authorised(HttpExchange ex, String project) throws IOException {
        String token = ex.getRequestHeaders().getFirst("apikey");
        String auth = ex.getRequestHeaders().getFirst("Authorization");
        if (auth != null && auth.regionMatches(true, 0, "Bearer ", 0, 7)) {
            token = auth.substring(7).trim();
        }
        if (token == null || token.isBlank()) {
            error(ex, 401, "API key is missing");
            return false;
        }
        String required = "a service_role JWT of project " + project + " signed with the platform's keys is required"
                + " (a project's own API keys and tokens do not manage keys)";
        if (ApiKeys.isApiKey(token)) {
            error(ex, 401, required);
            return false;
        }
        try {
            Claims claims = platformKeys.verify(token);
            if (!claims.isServiceRole() || !claims.projectId().equals(project)) {
                error(ex, 401, required);
                return false;
            }
            return true;
        } catch (AuthException e) {
            error(ex, 401, e.reason());
            return false;
        }
    }

    private void createKey(HttpExchange ex, UUID project) throws IOException, SQLException {
        JsonNode body = body(ex);
        ApiKeys.Kind kind =
                body == null ? null : ApiKeys.Kind.ofType(body.path("type").asText(null));
        JsonNode name = body == null ? null : body.get("name");
        if (kind == null || (name != null && !name.isTextual() && !name.isNull())) {
            error(ex, 400, "body must be JSON {\"type\": \"publishable\"|\"secret\", \"name\": \"...\"}");
            return;
        }
        String nameText = name == null || name.isNull() ? "" : name.asText();
        if (nameText.length() > MAX_NAME_CHARS) {
            error(ex, 400, "name longer than " + MAX_NAME_CHARS + " characters");
            return;
        }
        String key = ApiKeys.generate(kind);
        ProjectKeysTable.ApiKey row =
                table.createKey(project, kind.type(), nameText, ApiKeys.shown(key), ApiKeys.sha256(key));
        if (row == null) {
            error(ex, 404, "unknown project " + project);
            return;
        }
        log.info("API key {} ({}, {}) created for project {}", row.id(), row.type(), row.prefix(), project);
        ObjectNode out = keyJson(row).put("api_key", key);
        HttpApi.send(ex, 201, "application/json", mapper.writeValueAsBytes(out));
    }

    private void listKeys(HttpExchange ex, UUID project) throws IOException, SQLException {
        ArrayNode out = mapper.createArrayNode();
        for (ProjectKeysTable.ApiKey k : table.keys(project)) {
            out.add(keyJson(k));
        }
        HttpApi.send(ex, 200, "application/json", mapper.writeValueAsBytes(out));
    }

    private void revokeKey(HttpExchange ex, UUID project, UUID id) throws IOException, SQLException {
        ProjectKeysTable.ApiKey row = id == null ? null : table.revokeKey(project, id);
        if (row == null) {
            error(ex, 404, "the project has no API key of that id");
            return;
        }
        log.info("API key {} ({}) of project {} revoked", row.id(), row.prefix(), project);
        HttpApi.send(ex, 200, "application/json", mapper.writeValueAsBytes(keyJson(row)));
    }

    private void deleteIssuer(HttpExchange ex, UUID project, UUID id) throws IOException, SQLException {
        if (id == null || !table.deleteIssuer(project, id)) {
            error(ex, 404, "the project has no token issuer of that id");
            return;
        }
        log.info("token issuer {} of project {} removed", id, project);
        HttpApi.send(
                ex,
                200,
                "application/json",
                mapper.writeValueAsBytes(mapper.createObjectNode().put("id", id.toString())));
    }

    private ObjectNode keyJson(ProjectKeysTable.ApiKey k) {
        ObjectNode o = mapper.createObjectNode()
                .put("id", k.id())
                .put("type", k.type())
                .put("name", k.name())
                .put("prefix", k.prefix())
                .put("inserted_at", text(k.insertedAt()));
        o.put("revoked_at", text(k.revokedAt()));
        return o;
    }

    static String text(Instant t) {
        return t == null ? null : t.toString();
    }

    /** The request's JSON body (at most 256 KiB), or null when it is not JSON. */
    private JsonNode body(HttpExchange ex) throws IOException {
        try (InputStream in = ex.getRequestBody()) {
            byte[] bytes = in.readNBytes(MAX_BODY_BYTES + 1);
            if (bytes.length > MAX_BODY_BYTES) {
                return null;
            }
            return mapper.readTree(bytes);
        } catch (IOException e) {
            return null;
        }
    }

    void error(HttpExchange ex, int status, String message) throws IOException {
        error(ex, mapper, status, message);
    }

    static void error(HttpExchange ex, ObjectMapper mapper, int status, String message) throws IOException {
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
}
