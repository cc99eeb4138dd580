package dev.aura.realtime.cdc.control;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.KeyType;
import com.sun.net.httpserver.HttpExchange;
import dev.aura.realtime.cdc.catalog.ProjectKeysTable;
import dev.aura.realtime.cdc.http.HttpApi;
import dev.aura.realtime.common.auth.IssuerKeys;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.sql.SQLException;
import java.text.ParseException;
import java.util.List;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The token-issuer requests of {@link ProjectKeysApi}: a body is checked before anything is
 * stored, so a configuration the verifier would misread is refused with its reason: the issuer is
 * a string of 1 to 2,048 characters; a JWKS URL is http(s) with a host; inline keys are a JWKS of
 * at most {@link IssuerKeys#MAX_KEYS} EC, RSA or OKP <em>public</em> keys (a symmetric key or a
 * private part is refused: only public keys verify a project's tokens, and nothing secret is
 * stored); at least one of the two.
 */
final class IssuerRequests {
    private static final Logger log = LoggerFactory.getLogger(IssuerRequests.class);
    private static final int MAX_TEXT = 2048;
    private static final String SHAPE =
            "body must be JSON {\"issuer\": \"...\", \"audience\": \"...\"?, \"jwks_url\": \"https://...\"?,"
                    + " \"jwks\": {\"keys\": [...]}?} with jwks_url or jwks";

    private IssuerRequests() {}

    static void list(HttpExchange ex, ObjectMapper mapper, List<ProjectKeysTable.Issuer> issuers) throws IOException {
        ArrayNode out = mapper.createArrayNode();
        for (ProjectKeysTable.Issuer i : issuers) {
            ObjectNode o = out.addObject()
                    .put("id", i.id())
                    .put("issuer", i.issuer())
                    .put("audience", i.audience())
                    .put("jwks_url", i.jwksUrl());
            o.set("jwks", i.jwks() == null ? null : mapper.readTree(i.jwks()));
            o.put("inserted_at", ProjectKeysApi.text(i.insertedAt()))
                    .put("updated_at", ProjectKeysApi.text(i.updatedAt()));
        }
        HttpApi.send(ex, 200, "application/json", mapper.writeValueAsBytes(out));
    }

    static void put(HttpExchange ex, ObjectMapper mapper, ProjectKeysTable table, UUID project, JsonNode body)
            throws IOException, SQLException {
        if (body == null || !body.isObject()) {
            ProjectKeysApi.error(ex, mapper, 400, SHAPE);
            return;
        }
        String issuer = text(body, "issuer");
        String audience = text(body, "audience");
        String url = text(body, "jwks_url");
        JsonNode jwks = body.get("jwks");
        if (issuer == null || issuer.isEmpty() || (url == null && (jwks == null || jwks.isNull()))) {
            ProjectKeysApi.error(ex, mapper, 400, SHAPE);
            return;
        }
        String refusal = tooLong(issuer, "issuer");
        if (refusal == null && audience != null) {
            refusal = audience.isEmpty()
                    ? "audience must not be empty (leave it out to accept any)"
                    : tooLong(audience, "audience");
        }
        if (refusal == null && url != null) {
            refusal = urlRefusal(url);
        }
        String stored = null;
        if (refusal == null && jwks != null && !jwks.isNull()) {
            try {
                stored = publicJwks(jwks);
            } catch (IllegalArgumentException e) {
                refusal = e.getMessage();
            }
        }
        if (refusal != null) {
            ProjectKeysApi.error(ex, mapper, 400, refusal);
            return;
        }
        switch (table.putIssuer(project, issuer, audience, url, stored)) {
            case UNKNOWN_PROJECT -> ProjectKeysApi.error(ex, mapper, 404, "unknown project " + project);
            case TAKEN ->
                ProjectKeysApi.error(
                        ex,
                        mapper,
                        409,
                        "this issuer is configured for another project: an issuer belongs to one project, so its tokens"
                                + " can name only that one (docs/security.md)");
            case DONE -> {
                log.info(
                        "token issuer {} of project {} set (JWKS URL {}, inline keys {})",
                        issuer,
                        project,
                        url,
                        stored != null);
                list(
                        ex,
                        mapper,
                        table.issuers(project).stream()
                                .filter(i -> i.issuer().equals(issuer))
                                .toList());
            }
        }
    }

    private static String text(JsonNode body, String field) {
        JsonNode v = body.get(field);
        return v == null || v.isNull() ? null : v.isTextual() ? v.asText() : "";
    }

    private static String tooLong(String value, String field) {
        return value.length() > MAX_TEXT ? field + " longer than " + MAX_TEXT + " characters" : null;
    }

    private static String urlRefusal(String url) {
        if (url.length() > MAX_TEXT) {
            return "jwks_url longer than " + MAX_TEXT + " characters";
        }
        try {
            URI uri = new URI(url);
            if (!("https".equals(uri.getScheme()) || "http".equals(uri.getScheme())) || uri.getHost() == null) {
                return "jwks_url must be an http(s) URL with a host";
            }
            return null;
        } catch (URISyntaxException e) {
            return "jwks_url is not a URL";
        }
    }

    /**
     * The public JWKS text of {@code jwks}.
     *
     * @throws IllegalArgumentException naming what is refused
     */
    private static String publicJwks(JsonNode jwks) {
        JWKSet set;
        try {
            set = JWKSet.parse(jwks.toString());
        } catch (ParseException e) {
            throw new IllegalArgumentException("jwks is not a JWKS ({\"keys\": [...]}): " + e.getMessage());
        }
        if (set.getKeys().isEmpty() || set.getKeys().size() > IssuerKeys.MAX_KEYS) {
            throw new IllegalArgumentException("jwks must hold 1 to " + IssuerKeys.MAX_KEYS + " keys");
        }
        for (JWK k : set.getKeys()) {
            KeyType kty = k.getKeyType();
            if (!(KeyType.EC.equals(kty) || KeyType.RSA.equals(kty) || KeyType.OKP.equals(kty))) {
                throw new IllegalArgumentException("jwks holds a " + kty
                        + " key: only EC (ES256), RSA (RS256) and OKP (EdDSA) public keys verify a"
                        + " project's tokens");
            }
            if (k.isPrivate()) {
                throw new IllegalArgumentException(
                        "jwks holds a private key (kid " + k.getKeyID() + "): give the public keys only");
            }
        }
        return IssuerKeys.publicKeys(set).toString(true);
    }
}
