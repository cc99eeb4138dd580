package dev.aura.realtime.front.protocol;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A {@code phx_join} payload as the codec typed it ({@link JoinDecoder}):
 * {@code {"config":{"broadcast":{..},"presence":{..},"postgres_changes":[..],"postgres_changes_options":{..},
 * "private":..},"access_token":..}} (docs/protocol.md section 3). Immutable; past the codec nothing
 * reads the join's JSON.
 *
 * @param broadcast {@code config.broadcast}
 * @param presence {@code config.presence}
 * @param bindings the {@code config.postgres_changes} bindings in client order
 * @param postgresChangesOptions {@code config.postgres_changes_options}
 * @param privateChannel {@code config.private}: the join asks a read check of the channel
 * @param accessToken {@code access_token}, or null (the connection's apikey authorises the join)
 */
public record JoinConfig(
        Broadcast broadcast,
        Presence presence,
        List<Binding> bindings,
        PostgresChangesOptions postgresChangesOptions,
        boolean privateChannel,
        String accessToken) {

    /** realtime-js's default {@code postgres_changes_options.timeout}. */
    public static final long DEFAULT_WAIT_MS = 15_000;
    /** The longest wait a client may ask for (Supabase's default maximum); longer asks wait this long. */
    public static final long MAX_WAIT_MS = 20_000;
    /** Replay limit when the client gives none (Supabase's default and maximum are 25). */
    public static final int DEFAULT_REPLAY_LIMIT = 25;

    public JoinConfig {
        bindings = List.copyOf(bindings);
    }

    /**
     * {@code config.broadcast}.
     *
     * @param self the sender receives its own broadcasts
     * @param ack broadcasts are acknowledged with a reply
     * @param replay {@code replay}, or null when absent
     * @param replicationReady {@code replication_ready} (realtime-js 2.119): after the ok reply the
     *     channel is told, as a {@code system} message, once changes flow (or that they did not in time)
     */
    public record Broadcast(boolean self, boolean ack, Replay replay, boolean replicationReady) {}

    /**
     * {@code config.broadcast.replay}: history broadcasts sent at or after {@code sinceMs}, at most
     * {@code limit} (the newest ones).
     */
    public record Replay(long sinceMs, int limit) {}

    /**
     * {@code config.presence}.
     *
     * @param enabled {@code enabled} (absent: false)
     * @param key {@code key} as text, empty when absent (presence then picks a random key)
     */
    public record Presence(boolean enabled, String key) {
        /** No presence listener and no key. */
        public static final Presence OFF = new Presence(false, "");
    }

    /**
     * {@code config.postgres_changes_options}.
     *
     * @param waitMs with {@code wait: true}, how long the join may wait for its postgres_changes to
     *     flow (its {@code timeout}, default {@value #DEFAULT_WAIT_MS} ms, at most
     *     {@value #MAX_WAIT_MS}); 0 without {@code wait}
     * @param eventId {@code event_id}: change records carry {@code _aura_event_id}
     * @param resumeKey {@code resume_key} (an identity for a token without {@code sub}), or null
     * @param since {@code since} (the event id to resume after), or null
     */
    public record PostgresChangesOptions(long waitMs, boolean eventId, String resumeKey, String since) {}

    /**
     * One requested postgres_changes binding.
     *
     * @param id the server id ({@link BindingIds})
     * @param event upper-cased event
     * @param table table or {@code *}
     * @param filter filter or null (also for an empty string)
     * @param echo the client's values to echo, with {@code id}; a copy on every read
     * @param select the {@code select} columns, or null for every column
     */
    public record Binding(int id, String event, String table, String filter, ObjectNode echo, List<String> select) {
        public Binding {
            echo = echo.deepCopy();
        }

        @Override
        public ObjectNode echo() {
            return echo.deepCopy();
        }

        /**
         * What the server subscribes to: two bindings with equal subscriptions are identical (one
         * check, one registry entry, one id), whatever spelling of it the client echo keeps.
         */
        public Subscription subscription() {
            return new Subscription(event, table, filter, select);
        }
    }

    /** A binding's normalised parameters (upper-cased event, {@code *} for no table, null for no filter). */
    public record Subscription(String event, String table, String filter, List<String> select) {}

    /**
     * The bindings the server subscribes to: the first of each set of identical bindings
     * ({@link Binding#subscription()}), in client order. Each costs one subscription check and one
     * registry entry; the reply still echoes every client binding ({@link #bindings()}).
     */
    public List<Binding> distinct() {
        Set<Subscription> seen = new HashSet<>();
        List<Binding> out = new ArrayList<>();
        for (Binding b : bindings) {
            if (seen.add(b.subscription())) {
                out.add(b);
            }
        }
        return out;
    }

    /**
     * The subscription checks this join causes, what the project's checks budget counts: one per
     * distinct binding, plus the read check of a private channel.
     */
    public int checks() {
        return distinct().size() + (privateChannel ? 1 : 0);
    }
}
