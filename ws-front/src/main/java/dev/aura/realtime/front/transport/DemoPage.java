package dev.aura.realtime.front.transport;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * The demo page (docs/design.md D1): {@code GET /} and its two scripts under {@code /demo/}, served
 * from the jar's {@code demo/} resources. {@code supabase.js} is the unmodified UMD build of
 * {@code @supabase/supabase-js} from npm (version pinned in {@code e2e/js/package.json}; copied
 * by {@code e2e/js/vendor-demo.mjs}), so the page needs no CDN. Loaded once; immutable, so any
 * event loop may read it.
 */
final class DemoPage {
    /** A servable file. */
    record Asset(String contentType, byte[] body) {}

    /** Loaded when the first HTTP request arrives. */
    static final DemoPage INSTANCE = new DemoPage();

    private final Map<String, Asset> assets;

    DemoPage() {
        this.assets = Map.of(
                "/", load("index.html", "text/html; charset=utf-8"),
                "/demo/demo.js", load("demo.js", "text/javascript; charset=utf-8"),
                "/demo/supabase.js", load("supabase.js", "text/javascript; charset=utf-8"));
    }

    /** The asset at {@code path}, or null when the path is not part of the page. */
    Asset get(String path) {
        return assets.get(path);
    }

    private static Asset load(String name, String contentType) {
        try (InputStream in = DemoPage.class.getResourceAsStream("/demo/" + name)) {
            if (in == null) {
                throw new IllegalStateException("demo resource missing from the jar: demo/" + name);
            }
            return new Asset(contentType, in.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read demo/" + name, e);
        }
    }
}
