package dev.aura.realtime.cdc.join;

import dev.aura.realtime.cdc.identity.ProjectIdentity;
import dev.aura.realtime.cdc.tenant.ConnectionShare;
import dev.aura.realtime.cdc.tenant.RunnerSession;
import dev.aura.realtime.cdc.tenant.RunnerSession.Mode;
import dev.aura.realtime.cdc.tenant.TenantDb;
import dev.aura.realtime.cdc.tenant.TenantDb.Failure;
import dev.aura.realtime.cdc.tenant.TenantDb.Unavailable;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;

/**
 * Private channels' tenant SQL (docs/design.md H1, H2): the read check of a join, the write check
 * of a first broadcast or track, replay and persisted broadcasts. Each is one tenant transaction as
 * the project's role for the subscriber's client role (docs/design.md I), with its claims and
 * {@code realtime.topic} set to the channel's topic, so the tenant's policies on its messages table
 * decide, as in Supabase.
 *
 * <p><b>Fair share.</b> These statements take turns in the tenant pool's channel share
 * ({@link TenantDb#channelShare}, with the janitor): at most {@code CDC_TENANT_JOIN_CONNECTIONS}
 * connections (apart from the RLS checks' and the join-time casts'), one project at most half of
 * them; a caller that finds no room within the checkout timeout gets {@link ConnectionShare.Busy}.
 *
 * <p>The read check, the write check and replay run on the shared login, each through one call of
 * the project's runner (docs/design.md I); the first two insert and are always rolled back, so they
 * run read-write. Persisted broadcasts commit, so they run on the project's own login
 * ({@code tenant.ProjectLogins}), again through one runner call: deferred triggers fire at
 * {@code COMMIT} outside the runner, as that login, which holds no role and no privilege.
 */
public final class ChannelChecks {
    /** A read check's answer; {@code failure} is non-null when the check could not decide (denied). */
    public record ReadVerdict(boolean broadcast, boolean presence, Failure failure) {}

    /** A write check's or persist's answer: allowed (with the row id for persist), or denied and why. */
    public record WriteVerdict(boolean allowed, String id, Failure failure) {}

    /**
     * A stored broadcast as replay reads it.
     *
     * @param payload the JSON payload's text, or null for a binary message
     * @param binaryPayload the binary message's bytes ({@code binary_payload}), or null
     */
    public record StoredMessage(String id, String event, String payload, long insertedAtMs, byte[] binaryPayload) {}

    private final TenantDb db;
    private final ConnectionShare share;

    ChannelChecks(TenantDb db) {
        this.db = db;
        this.share = db.channelShare();
    }

    /**
     * The channel a statement is for, and as whom: the project with its schema and realtime schema,
     * the subscriber's client role and claims, and the channel's topic.
     */
    public record Channel(
            ProjectIdentity project,
            String clientRole,
            String claims,
            String projectSchema,
            String realtimeSchema,
            String topic) {}

    /**
     * Which of broadcast and presence the project's client role may read on the topic (Supabase's
     * probe: rows inserted, selected, rolled back), through the project's runner.
     */
    public ReadVerdict read(Channel on) throws Unavailable, ConnectionShare.Busy {
        return readAll(
                        on.project(),
                        on.projectSchema(),
                        on.realtimeSchema(),
                        List.of(new ReadAsk(on.clientRole(), on.claims(), on.topic())),
                        null)
                .get(0);
    }

    /** One read check of a batch: the subscriber's client role and claims, and the topic. */
    public record ReadAsk(String clientRole, String claims, String topic) {}

    /**
     * The read checks of many joins of one project in one transaction, each in its own savepoint
     * with its own claims, topic, {@code statement_timeout} and watchdog, rolled back before the
     * next ({@link TenantDb#eachSession}): one slow or failing policy denies its own check only.
     * Stops starting checks once {@code slice} has passed, so one project's slow policies hold a
     * connection of the lane for one check's timeout at most before the others' turn.
     *
     * @return the verdicts of the first asks, in order (all, unless the slice ran out)
     */
    public List<ReadVerdict> readAll(
            ProjectIdentity project, String projectSchema, String realtimeSchema, List<ReadAsk> asks, Duration slice)
            throws Unavailable, ConnectionShare.Busy {
        String query = "SELECT ARRAY[r.read_broadcast::text, r.read_presence::text]"
                + " FROM aura_rls.channel_read($1[1], $1[2]) r";
        List<RunnerSession.Item<String[]>> items = new ArrayList<>();
        for (ReadAsk ask : asks) {
            items.add(new RunnerSession.Item<>() {
                @Override
                public String claims() {
                    return ask.claims();
                }

                @Override
                public String topic() {
                    return ask.topic();
                }

                @Override
                public String[] run(RunnerSession s) throws SQLException {
                    return s.viaRunner(
                                    project.runner(ask.clientRole()), query, new Object[] {realtimeSchema, ask.topic()})
                            .get(0);
                }
            });
        }
        try {
            List<RunnerSession.Outcome<String[]>> outcomes = share.admitted(
                    projectSchema, () -> db.eachSession(projectSchema, Mode.WRITE_ROLLBACK, items, slice));
            List<ReadVerdict> out = new ArrayList<>(outcomes.size());
            for (RunnerSession.Outcome<String[]> o : outcomes) {
                out.add(
                        o.failure() != null
                                ? new ReadVerdict(false, false, o.failure())
                                : new ReadVerdict("true".equals(o.value()[0]), "true".equals(o.value()[1]), null));
            }
            return out;
        } catch (RunnerSession.TenantFailure f) {
            throw new IllegalStateException("a batch reports failures per check", f);
        }
    }

    /**
     * Whether the insert policy lets the project's client role write {@code extension} messages on
     * the topic; through the runner, rolled back.
     */
    public WriteVerdict write(Channel on, String extension) throws Unavailable, ConnectionShare.Busy {
        try {
            // no RETURNING: the insert policy alone decides, not the SELECT policies
            viaRunner(
                    on,
                    Mode.WRITE_ROLLBACK,
                    "WITH w AS (INSERT INTO " + ident(on.realtimeSchema()) + ".messages(topic, extension, private,"
                            + " event) VALUES ($1[1], $1[2], true, 'aura_write_check')) SELECT ARRAY['ok']",
                    on.topic(),
                    extension);
            return new WriteVerdict(true, null, null);
        } catch (RunnerSession.TenantFailure f) {
            return new WriteVerdict(false, null, f.failure());
        }
    }

    /**
     * Stores one private broadcast on the channel as the project's client role (the insert policy
     * decides) and commits it, on the project's login; the slot then delivers it. The row's id is chosen
     * here, so the insert needs no {@code RETURNING} (which would make the role's SELECT policies
     * decide too).
     *
     * @param ttlMs the row's {@code expires_at} is this long after now, at most the retention
     *     ({@code aura_rls.messages_retention()}); 0 leaves it null (the retention applies)
     */
    public WriteVerdict persist(Channel on, String event, String payloadJson, byte[] binaryPayload, long ttlMs)
            throws Unavailable, ConnectionShare.Busy {
        UUID id = UUID.randomUUID();
        try {
            return share.admitted(
                    on.projectSchema(),
                    () -> db.projectSession(on.project(), on.claims(), on.projectSchema(), Mode.WRITE_COMMIT, s -> {
                        s.setTopic(on.topic());
                        s.viaRunner(
                                on.project().runner(on.clientRole()),
                                "WITH w AS (INSERT INTO " + ident(on.realtimeSchema())
                                        + ".messages(id, topic, extension, private, event, "
                                        + (binaryPayload == null ? "payload" : "binary_payload") + ", expires_at)"
                                        + " VALUES ($1[1]::uuid, $1[2], 'broadcast', true, $1[3], "
                                        + (binaryPayload == null ? "$1[4]::jsonb" : "decode($1[4], 'hex')") + ","
                                        + " CASE WHEN $1[5]::bigint > 0 THEN now() + least(make_interval(secs =>"
                                        + " $1[5]::bigint / 1000.0), aura_rls.messages_retention()) END))"
                                        + " SELECT ARRAY['ok']",
                                new Object[] {
                                    id.toString(),
                                    on.topic(),
                                    event,
                                    binaryPayload == null
                                            ? payloadJson
                                            : HexFormat.of().formatHex(binaryPayload),
                                    Long.toString(ttlMs)
                                });
                        return new WriteVerdict(true, id.toString(), null);
                    }));
        } catch (RunnerSession.TenantFailure f) {
            return new WriteVerdict(false, null, f.failure());
        }
    }

    /**
     * The private broadcasts of the channel's topic inserted at or after {@code sinceMs} that the
     * project's client role may read, the newest {@code limit}, returned oldest first in
     * insertion order ({@code seq}), so one transaction's messages keep their order.
     *
     * @return the messages, or null when the tenant's policy raised or timed out (denied)
     */
    public List<StoredMessage> replay(Channel on, long sinceMs, int limit) throws Unavailable, ConnectionShare.Busy {
        try {
            List<StoredMessage> out = new ArrayList<>();
            for (String[] row : viaRunner(
                    on,
                    Mode.READ_ONLY,
                    "SELECT ARRAY[id::text, coalesce(event, ''), CASE WHEN binary_payload IS NULL"
                            + " THEN coalesce(payload, '{}'::jsonb)::text ELSE encode(binary_payload, 'hex') END,"
                            + " floor(extract(epoch FROM inserted_at) * 1000)::bigint::text,"
                            + " (binary_payload IS NOT NULL)::text] FROM "
                            + ident(on.realtimeSchema()) + ".messages"
                            + " WHERE topic = $1[1] AND extension = 'broadcast' AND private"
                            + " AND inserted_at >= to_timestamp($1[2]::double precision / 1000)"
                            + " AND (expires_at IS NULL OR expires_at > now())"
                            + " ORDER BY seq DESC LIMIT $1[3]::integer",
                    on.topic(),
                    Long.toString(sinceMs),
                    Integer.toString(limit))) {
                boolean binary = "true".equals(row[4]);
                byte[] bytes;
                try {
                    bytes = binary ? HexFormat.of().parseHex(row[2]) : null;
                } catch (IllegalArgumentException e) {
                    return null; // not what encode(.., 'hex') writes: the tenant's doing, a failed replay
                }
                out.add(new StoredMessage(row[0], row[1], binary ? null : row[2], Long.parseLong(row[3]), bytes));
            }
            Collections.reverse(out);
            return out;
        } catch (RunnerSession.TenantFailure f) {
            return null;
        }
    }

    /**
     * One call of the project's runner for the channel's client role: {@code query} with
     * {@code args} as its {@code $1}, in a session of the shared login with the claims and
     * {@code realtime.topic()} answering the channel's topic, on the project's part of the channel
     * share.
     */
    private List<String[]> viaRunner(Channel on, Mode mode, String query, String... args)
            throws Unavailable, ConnectionShare.Busy, RunnerSession.TenantFailure {
        return share.admitted(
                on.projectSchema(),
                () -> db.session(on.claims(), on.projectSchema(), db.statementTimeout(), mode, s -> {
                    s.setTopic(on.topic());
                    return s.viaRunner(on.project().runner(on.clientRole()), query, args);
                }));
    }

    private static String ident(String name) {
        return "\"" + name.replace("\"", "\"\"") + "\"";
    }
}
