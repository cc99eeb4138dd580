package dev.aura.realtime.front.transport;

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
    /** A servable file. */
    record Asset(String contentType, byte[] body) {}

    /** Loaded when the first HTTP request arrives. */
    static final StaticPages INSTANCE = new StaticPages();

    private static final String HTML = "text/html; charset=utf-8";
    private static final String JS = "text/javascript; charset=utf-8";

    private final Map<String, Asset> assets;

    StaticPages() {
        Asset inspector = load("inspector/index.html", HTML);
        this.assets = Map.of(
                "/", load("demo/index.html", HTML),
                "/demo/demo.js", load("demo/demo.js", JS),
                "/demo/supabase.js", load("demo/supabase.js", JS),
                "/inspector", inspector,
                "/inspector/", inspector,
                "/inspector/inspector.js", load("inspector/inspector.js", JS));
    }

    /** The asset at {@code path}, or null when the path is not part of a page. */
    Asset get(String path) {
        return assets.get(path);
    }

    private static Asset load(String name, String contentType) {
        try (InputStream in = StaticPages.class.getResourceAsStream("/" + name)) {
            if (in == null) {
                throw new IllegalStateException("page resource missing from the jar: " + name);
            }
            return new Asset(contentType, in.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + name, e);
        }
    }
}
