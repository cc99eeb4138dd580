package dev.aura.realtime.cdc.match;

import dev.aura.realtime.cdc.event.BuiltEvent;
import dev.aura.realtime.common.filter.FilterException;
import dev.aura.realtime.common.filter.Filters;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Applies each binding's event and filter to a change, before any RLS check (docs/design.md C7).
 *
 * <p>Event: {@code *} or the change's type. Filter: tested against the new row, or the old row
 * for DELETE (Supabase's rule), every condition of the AND list; a TRUNCATE has no row, so only
 * unfiltered bindings see it. A filter that no longer parses (it was checked at join) matches
 * nothing. Thread-safe.
 *
 * <p>Parsed filters (with their compiled patterns) are cached by text, at most {@value
 * #MAX_CACHED_FILTERS} of them: filter texts come from tenants' clients, so an unbounded cache would
 * grow with every distinct filter ever registered. When full, the cache is emptied and refills with
 * the filters in use (parsing is cheap next to the RLS check; what matters is bounded memory).
 */
public final class Matcher {
    /** Distinct filter texts kept parsed. */
    static final int MAX_CACHED_FILTERS = 10_000;

    private static final Object INVALID = new Object();
    private final Map<String, Object> parsed = new ConcurrentHashMap<>();

    public List<SubscriptionEntry> match(BuiltEvent event, List<SubscriptionEntry> candidates) {
        if (candidates.isEmpty()) {
            return List.of();
        }
        List<SubscriptionEntry> out = new ArrayList<>(candidates.size());
        for (SubscriptionEntry s : candidates) {
            if (!eventMatches(s.event(), event.type())) {
                continue;
            }
            String filterText = s.filter();
            if (filterText == null || filterText.isEmpty()) {
                out.add(s);
                continue;
            }
            if ("TRUNCATE".equals(event.type())) {
                continue;
            }
            if (parsed.size() >= MAX_CACHED_FILTERS) {
                parsed.clear();
            }
            Object f = parsed.computeIfAbsent(filterText, Matcher::parseOrInvalid);
            if (f instanceof Filters filters && filters.matches(event.filterRow(), event.columnTypes())) {
                out.add(s);
            }
        }
        return out;
    }

    /** Filter texts cached now (at most {@link #MAX_CACHED_FILTERS}). */
    int cachedFilters() {
        return parsed.size();
    }

    /** Whether a binding's {@code event} ({@code *}, null or a type) takes a change of {@code type}. */
    public static boolean eventMatches(String bindingEvent, String type) {
        return bindingEvent == null || "*".equals(bindingEvent) || bindingEvent.equalsIgnoreCase(type);
    }

    private static Object parseOrInvalid(String text) {
        try {
            return Filters.parse(text);
        } catch (FilterException e) {
            return INVALID;
        }
    }
}
