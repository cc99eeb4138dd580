package dev.aura.realtime.front.relay;

import dev.aura.realtime.common.wire.SubscriptionCheck;
import java.util.concurrent.CompletableFuture;

/**
 * Asks a cdc-worker whether a postgres_changes binding can be served (table enabled, filter
 * column and value valid). The future never fails: transport problems become
 * {@link Outcome.Unavailable}. Completes on a relay thread.
 */
@FunctionalInterface
public interface SubscriptionChecker {
    CompletableFuture<Outcome> check(SubscriptionCheck.Request request);

    /** The answer to one check. */
    sealed interface Outcome {
        /**
         * The binding is valid; {@code columnType} is the filter column's typname or null;
         * {@code notice} ({@code "Code: message"}) or null says what the binding will not receive
         * (pushed to the client as a {@code system} message after the join).
         */
        record Valid(String columnType, String notice) implements Outcome {
            public Valid(String columnType) {
                this(columnType, null);
            }
        }

        /** Refused; {@code reason} is Supabase wording ({@code "Code: message"}). */
        record Invalid(String reason) implements Outcome {}

        /** No cdc-worker answered (no responders, timeout, NATS down). */
        record Unavailable(String detail) implements Outcome {}
    }
}
