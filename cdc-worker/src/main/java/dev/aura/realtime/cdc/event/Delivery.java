package dev.aura.realtime.cdc.event;

import java.util.List;

/**
 * One message to publish for a change: the subscribers ({@code sub_id}s, in registry order) that
 * see it through the same {@link View}.
 */
public record Delivery(View view, List<String> subIds) {
    public Delivery {
        subIds = List.copyOf(subIds);
    }
}
