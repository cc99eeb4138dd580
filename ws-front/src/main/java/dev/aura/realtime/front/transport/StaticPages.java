package dev.aura.realtime.front.transport;

import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.ReadOnlyHttpHeaders;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * The pages ws-front serves from the jar (docs/design.md D1, D9): the demo page ({@code GET /} and
 * its scripts under {@code /demo/}) and the inspector ({@code GET /inspector} and its script).
 * Both load {@code /demo/supabase.js}, the unmodified UMD build of {@code @supabase/supabase-js}
 * from npm (which carries the unmodified realtime-js; version pinned in {@code e2e/js/package.json},
 * copied by {@code e2e/js/vendor-demo.mjs}), so neither needs a CDN. The pages hold no secret: keys
 * are typed into the browser and stay there. Loaded once; immutable, so any event loop may read it.
 */
final class StaticPages {
    /** A servable file and the headers it is sent with besides its type and length. */
    record Asset(String contentType, byte[] body, HttpHeaders headers) {}

    private static final String HTML = "text/html; charset=utf-8";
    private static final String JS = "text/javascript; charset=utf-8";
    private static final String CSS = "text/css; charset=utf-8";

    /**
     * The inspector page's headers: its scripts, styles and connections only from this server
     * (tenant text it lists can never run as script), never framed by another site (a framed page could be used
     * to make someone paste a key), no referrer.
     */
    static final HttpHeaders INSPECTOR_HEADERS = new ReadOnlyHttpHeaders(
            true,
            HttpHeaderNames.CONTENT_SECURITY_POLICY,
            "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self';"
                    + " img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
            HttpHeaderNames.X_FRAME_OPTIONS,
            "DENY",
            "Referrer-Policy",
            "no-referrer",
            "X-Content-Type-Options",
            "nosniff");

    /** Loaded when the first HTTP request arrives (after the constants above, which it uses). */
    static final StaticPages INSTANCE = new StaticPages();

    private final Map<String, Asset> assets;

    StaticPages() {
        Asset inspector = load("inspector/index.html", HTML, INSPECTOR_HEADERS);
        this.assets = Map.of(
                "/", load("demo/index.html", HTML),
                "/demo/demo.js", load("demo/demo.js", JS),
                "/demo/supabase.js", load("demo/supabase.js", JS),
                "/inspector", inspector,
                "/inspector/", inspector,
                "/inspector/inspector.js", load("inspector/inspector.js", JS, INSPECTOR_HEADERS),
                "/inspector/inspector.css", load("inspector/inspector.css", CSS, INSPECTOR_HEADERS));
    }

    /** The asset at {@code path}, or null when the path is not part of a page. */
    Asset get(String path) {
        return assets.get(path);
    }

    private static Asset load(String name, String contentType) {
        return load(name, contentType, EmptyHttpHeaders.INSTANCE);
    }

    private static Asset load(String name, String contentType, HttpHeaders headers) {
        try (InputStream in = StaticPages.class.getResourceAsStream("/" + name)) {
            if (in == null) {
                throw new IllegalStateException("page resource missing from the jar: " + name);
            }
            return new Asset(contentType, in.readAllBytes(), headers);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + name, e);
        }
    }
}
