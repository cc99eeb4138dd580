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
 */
public final class Matcher {
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
            Filter f = parsed.computeIfAbsent(filterText, Matcher::parseOrInvalid);
            if (f != INVALID && f.matches(event.filterRow(), event.columnTypes().get(f.column()))) {
                out.add(s);
            }
        }
        return out;
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
