package dev.aura.realtime.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The cdc-worker's control API as a project admin calls it (docs/design.md C9):
 * {@code PUT /v1/db/{project}/schema/tables/{table}/realtime} with {@code {"enabled": ...}} and a
 * {@code service_role} key of the project in the {@code apikey} header.
 *
 * <p>Thread-safe; one {@link HttpClient} per instance.
 */
public final class ControlApiClient {
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

    private final int port;
    private final HttpClient http = HttpClient.newHttpClient();

    /** @param port the cdc-worker's {@code CDC_HTTP_PORT} on 127.0.0.1 */
    public ControlApiClient(int port) {
        this.port = port;
    }

    /**
     * Enables realtime on {@code table} of {@code projectId}.
     *
     * @param serviceRoleKey a {@code service_role} JWT of the project (e.g. {@link TestTokens#serviceRole})
     * @throws IllegalStateException unless the API answers 200, with the status and body
     */
    public void enable(String projectId, String table, String serviceRoleKey) {
        setRealtime(projectId, table, true, serviceRoleKey);
    }

    /**
     * Disables realtime on {@code table} of {@code projectId}.
     *
     * @throws IllegalStateException unless the API answers 200, with the status and body
     */
    public void disable(String projectId, String table, String serviceRoleKey) {
        setRealtime(projectId, table, false, serviceRoleKey);
    }

    /**
     * Sends {@code {"enabled": enabled}} and requires 200.
     *
     * @throws IllegalStateException unless the API answers 200, with the status and body
     */
    public void setRealtime(String projectId, String table, boolean enabled, String serviceRoleKey) {
        HttpResponse<String> response = putRealtime(projectId, table, "{\"enabled\":" + enabled + "}", serviceRoleKey);
        if (response.statusCode() != 200) {
            throw new IllegalStateException((enabled ? "enable " : "disable ") + projectId + "/" + table + ": "
                    + response.statusCode() + " " + response.body());
        }
    }

    /**
     * Sends {@code body} as is and returns the response, whatever its status: for tests of the
     * API's refusals.
     *
     * @param apikey sent as the {@code apikey} header; null sends none
     * @throws UncheckedIOException when the API cannot be reached
     */
    public HttpResponse<String> putRealtime(String projectId, String table, String body, String apikey) {
        HttpRequest.Builder request = HttpRequest.newBuilder(realtimeUri(projectId, table))
                .timeout(REQUEST_TIMEOUT)
                .header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString(body));
        if (apikey != null) {
            request.header("apikey", apikey);
        }
        try {
            return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException("control API on port " + port + " unreachable", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted calling the control API", e);
        }
    }

    /**
     * Any control API request, answered whatever its status (the project's API keys and token
     * issuers, docs/security.md "Each project's own keys").
     *
     * @param method {@code GET}, {@code POST}, {@code PUT} or {@code DELETE}
     * @param path e.g. {@code /v1/projects/<id>/api-keys}
     * @param body JSON text, or null for none
     * @param serviceKey sent as {@code Authorization: Bearer}; null sends none
     * @throws UncheckedIOException when the API cannot be reached
     */
    public HttpResponse<String> call(String method, String path, String body, String serviceKey) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(REQUEST_TIMEOUT)
                .method(
                        method,
                        body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (body != null) {
            request.header("Content-Type", "application/json");
        }
        if (serviceKey != null) {
            request.header("Authorization", "Bearer " + serviceKey);
        }
        try {
            return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException("control API on port " + port + " unreachable", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted calling the control API", e);
        }
    }

    /**
     * Creates an API key of {@code projectId}: {@code POST /v1/projects/<id>/api-keys}.
     *
     * @param type {@code publishable} or {@code secret}
     * @return the answer's JSON text ({@code api_key}, {@code id}, ...)
     * @throws IllegalStateException unless the API answers 201
     */
    public String createApiKey(String projectId, String type, String name, String serviceKey) {
        HttpResponse<String> r = call(
                "POST",
                "/v1/projects/" + segment(projectId) + "/api-keys",
                "{\"type\":\"" + type + "\",\"name\":\"" + name + "\"}",
                serviceKey);
        if (r.statusCode() != 201) {
            throw new IllegalStateException("create API key of " + projectId + ": " + r.statusCode() + " " + r.body());
        }
        return r.body();
    }

    /** The endpoint's URI; the table name is one path segment (percent-encoded, spaces as {@code %20}). */
    public URI realtimeUri(String projectId, String table) {
        return URI.create("http://127.0.0.1:" + port + "/v1/db/" + segment(projectId) + "/schema/tables/"
                + segment(table) + "/realtime");
    }

    private static String segment(String text) {
        return URLEncoder.encode(text, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
