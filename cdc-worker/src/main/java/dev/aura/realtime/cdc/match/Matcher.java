package dev.aura.realtime.cdc.match;

import dev.aura.realtime.cdc.event.BuiltEvent;
import dev.aura.realtime.common.filter.Filter;
import dev.aura.realtime.common.filter.FilterException;
import dev.aura.realtime.common.filter.FilterOp;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Applies each binding's event and filter to a change, before any RLS check (docs/design.md C7).
 *
 * <p>Event: {@code *} or the change's type. Filter: tested against the new row, or the old row
 * for DELETE (Supabase's rule); a TRUNCATE has no row, so only unfiltered bindings see it. A
 * filter that no longer parses (it was checked at join) matches nothing. Thread-safe.
 *
 * <p>Parsed filters are cached by text, at most {@link #MAX_CACHED_FILTERS} of them: filter texts
 * come from tenants' clients, so an unbounded cache grew with every distinct filter ever
 * registered. When full, the cache is emptied and refills with the filters in use (parsing is
 * cheap next to the RLS check; what matters is that memory stays bounded).
 */
public final class Matcher {
    /** Distinct filter texts kept parsed. */
    static final int MAX_CACHED_FILTERS = 10_000;

    private static final Filter INVALID = new Filter("", FilterOp.EQ, List.of(""));
    private final Map<String, Filter> parsed = new ConcurrentHashMap<>();

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
            Filter f = parsed(filterText);
            if (f != INVALID && f.matches(event.filterRow(), event.columnTypes().get(f.column()))) {
                out.add(s);
            }
        }
        return out;
    }

    private Filter parsed(String text) {
        Filter f = parsed.get(text);
        if (f == null) {
            f = parseOrInvalid(text);
            if (parsed.size() >= MAX_CACHED_FILTERS) {
                parsed.clear();
            }
            parsed.put(text, f);
        }
        return f;
    }

    /** Filters currently cached (for tests). */
    int cachedFilters() {
        return parsed.size();
    }

    static boolean eventMatches(String bindingEvent, String type) {
        return bindingEvent == null || "*".equals(bindingEvent) || bindingEvent.equalsIgnoreCase(type);
    }

    private static Filter parseOrInvalid(String text) {
        try {
            return Filter.parse(text);
        } catch (FilterException e) {
            return INVALID;
        }
    }
}
