package dev.aura.realtime.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.cdc.identity.ProjectIdentity;
import dev.aura.realtime.cdc.provision.RealtimeSchemas;
import dev.aura.realtime.common.wire.AuraHeaders;
import dev.aura.realtime.common.wire.ChannelAccess;
import dev.aura.realtime.common.wire.DbBroadcast;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.WireJson;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import io.nats.client.Dispatcher;
import io.nats.client.Message;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Private channels on a real Postgres and NATS with an in-process worker (docs/design.md H1, H2):
 * each project's realtime schema, the channel-access RPC (read and write checks, persist, replay)
 * on the tenant pool under the subscriber's role and claims, messages rows captured by the same
 * slot, the janitor, and what hostile tenant code cannot do with them.
 */
class ChannelAccessIT {
    private static final Duration T = Duration.ofSeconds(15);
    private static final ObjectMapper JSON = WireJson.mapper();
    private static CdcFixture fx;
    private static String rt;
    private static final List<Captured> captured = new CopyOnWriteArrayList<>();
    private static Dispatcher messages;

    /** A message the worker published on a {@code messages} subject. */
    record Captured(String subject, String eventId, DbBroadcast message) {}

    @BeforeAll
    static void start() throws Exception {
        fx = new CdcFixture(PostgresServer.shared(), NatsServer.shared());
        fx.startWorker(Map.of("CDC_TABLE_REFRESH_MS", "200", "CDC_MESSAGES_JANITOR_MS", "1000"));
        messages = fx.nats.createDispatcher(m -> {
            try {
                captured.add(new Captured(
                        m.getSubject(),
                        m.getHeaders().getFirst(AuraHeaders.EVENT_ID),
                        JSON.readValue(m.getData(), DbBroadcast.class)));
            } catch (java.io.IOException e) {
                throw new IllegalStateException(e);
            }
        });
        messages.subscribe(Subjects.MESSAGES + ".>");
        fx.createProject();
        rt = "\"" + RealtimeSchemas.nameOf(fx.projectId) + "\"";
        awaitProvisioned(fx.projectId);
        fx.sql(
                // Supabase's policies after the schema mapping: organisation acme reads its topics,
                // its writers write them; presence of 'lobby' is readable by everyone signed in
                "CREATE POLICY acme_reads ON " + rt + ".messages FOR SELECT TO aura_authenticated USING (" + rt
                        + ".topic() LIKE 'acme:%' AND extension = 'broadcast' AND auth.jwt() ->> 'org' = 'acme')",
                "CREATE POLICY lobby_presence ON " + rt + ".messages FOR SELECT TO aura_authenticated USING (" + rt
                        + ".topic() = 'lobby' AND extension = 'presence')",
                "CREATE POLICY acme_writes ON " + rt + ".messages FOR INSERT TO aura_authenticated WITH CHECK (" + rt
                        + ".topic() LIKE 'acme:%' AND auth.jwt() ->> 'writer' = 'yes')",
                // a drop box: anyone signed in may write, nobody may read
                "CREATE POLICY dropbox_writes ON " + rt + ".messages FOR INSERT TO aura_authenticated WITH CHECK (" + rt
                        + ".topic() LIKE 'dropbox:%')",
                "CREATE POLICY raises ON " + rt + ".messages FOR SELECT TO aura_authenticated USING (CASE WHEN " + rt
                        + ".topic() = 'boom' THEN length(topic) / 0 = 1 ELSE false END)",
                "CREATE POLICY sleeps ON " + rt + ".messages FOR SELECT TO aura_authenticated USING (CASE WHEN " + rt
                        + ".topic() = 'slow' THEN pg_sleep(5) IS NULL ELSE false END)");
        awaitCapturedMessagesOf(fx.projectId);
    }

    @AfterAll
    static void stop() throws Exception {
        fx.nats.closeDispatcher(messages);
        fx.close();
    }

    private static void awaitProvisioned(String projectId) {
        Awaitility.await()
                .atMost(T)
                .until(() -> String.valueOf(dev.aura.realtime.cdc.provision.RealtimeSchemas.VERSION)
                        .equals(fx.queryOne("SELECT realtime_schema_version FROM aura_platform.projects"
                                + " WHERE project_id = '" + projectId + "'")));
    }

    private static void awaitCapturedMessagesOf(String projectId) {
        Awaitility.await()
                .atMost(T)
                .until(() -> fx.worker().enabledTables().contains(RealtimeSchemas.nameOf(projectId), "messages"));
    }

    private static String claims(String org, boolean writer) {
        var c = JSON.createObjectNode()
                .put("role", "authenticated")
                .put("ref", fx.projectId)
                .put("sub", UUID.randomUUID().toString())
                .put("org", org);
        if (writer) {
            c.put("writer", "yes");
        }
        return c.toString();
    }

    private static ChannelAccess.Reply ask(ChannelAccess.Request request) throws Exception {
        Message reply =
                fx.nats.request(Subjects.CHANNEL_ACCESS, JSON.writeValueAsBytes(request), Duration.ofSeconds(10));
        assertThat(reply).as("a cdc-worker answers " + request.op()).isNotNull();
        return JSON.readValue(reply.getData(), ChannelAccess.Reply.class);
    }

    private static ChannelAccess.Reply read(String topic, String claims) throws Exception {
        return ask(ChannelAccess.Request.read(fx.projectId, topic, "authenticated", claims));
    }

    /** Rows the read and write checks inserted and should have rolled back. */
    private static long checkRows() {
        return Long.parseLong(fx.queryOne(
                "SELECT count(*) FROM " + rt + ".messages WHERE event IN ('aura_read_check', 'aura_write_check')"));
    }

    @Test
    void eachProjectGetsItsRealtimeSchemaOwnedByTheOwnerOfItsSchemaAndCapturedBySameSlot() {
        assertThat(fx.queryOne("SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = '"
                        + RealtimeSchemas.nameOf(fx.projectId) + "'"))
                .isEqualTo(fx.queryOne(
                        "SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = '" + fx.schema + "'"));
        assertThat(fx.queryOne("SELECT relrowsecurity::text FROM pg_class WHERE oid = '" + rt + ".messages'::regclass"))
                .isEqualTo("true");
        assertThat(fx.queryOne("SELECT string_agg(proname, ',' ORDER BY proname) FROM pg_proc WHERE pronamespace = '"
                        + rt + "'::regnamespace"))
                .isEqualTo("aura_janitor,aura_probe,aura_probe_guard,broadcast_changes,send,send_binary,topic");
        assertThat(fx.worker().enabledTables().contains(RealtimeSchemas.nameOf(fx.projectId), "messages"))
                .isTrue();
    }

    @Test
    void aProjectIsProvisionedOnceItsSchemaExistsAndNeverIntoASchemaSomeoneElseCreated() throws Exception {
        String late = UUID.randomUUID().toString();
        String lateSchema = "project_" + late.replace('-', '_');
        String owner = "aura_t_owner_" + late.substring(0, 8);
        String squatter = "aura_t_squat_" + late.substring(0, 8);
        fx.sql(
                "CREATE ROLE " + owner + " NOLOGIN",
                "CREATE ROLE " + squatter + " NOLOGIN",
                "INSERT INTO aura_platform.projects(project_id, schema_name) VALUES ('" + late + "', '" + lateSchema
                        + "')",
                // someone else takes the realtime schema's name before the project's schema exists
                "CREATE SCHEMA \"" + RealtimeSchemas.nameOf(late) + "\" AUTHORIZATION " + squatter);
        String version = "SELECT realtime_schema_version FROM aura_platform.projects WHERE project_id = '" + late + "'";
        // provisioning runs every 200 ms: it keeps failing while the project's schema is missing
        Awaitility.await()
                .during(Duration.ofSeconds(1))
                .atMost(Duration.ofSeconds(3))
                .until(() -> "0".equals(fx.queryOne(version)));

        fx.sql("CREATE SCHEMA \"" + lateSchema + "\" AUTHORIZATION " + owner);
        Awaitility.await()
                .alias("the squatter's schema is not adopted")
                .during(Duration.ofSeconds(1))
                .atMost(Duration.ofSeconds(3))
                .until(() -> "0".equals(fx.queryOne(version)));

        fx.sql("DROP SCHEMA \"" + RealtimeSchemas.nameOf(late) + "\"");
        awaitProvisioned(late);
        assertThat(fx.queryOne("SELECT tableowner FROM pg_tables WHERE schemaname = '" + RealtimeSchemas.nameOf(late)
                        + "' AND tablename = 'messages'"))
                .isEqualTo(owner);
    }

    @Test
    void aVersion2ProjectGainsBinaryPayloadAndSendBinaryKeepingItsRows() throws Exception {
        String old = UUID.randomUUID().toString();
        String oldSchema = "project_" + old.replace('-', '_');
        String owner = "aura_t_v2_" + old.substring(0, 8);
        String oldRt = "\"" + RealtimeSchemas.nameOf(old) + "\"";
        // the layout version 2 created (no binary_payload, no send_binary), with a stored message
        fx.sql(
                "BEGIN",
                "CREATE ROLE " + owner + " NOLOGIN",
                "CREATE SCHEMA \"" + oldSchema + "\" AUTHORIZATION " + owner,
                "CREATE SCHEMA " + oldRt + " AUTHORIZATION " + owner,
                "CREATE TABLE " + oldRt + ".messages(topic text NOT NULL, extension text NOT NULL, payload jsonb,"
                        + " event text, private boolean DEFAULT false, updated_at timestamptz NOT NULL DEFAULT now(),"
                        + " inserted_at timestamptz NOT NULL DEFAULT now(),"
                        + " id uuid NOT NULL DEFAULT gen_random_uuid() PRIMARY KEY,"
                        + " seq bigint GENERATED ALWAYS AS IDENTITY)",
                "ALTER TABLE " + oldRt + ".messages OWNER TO " + owner,
                "INSERT INTO " + oldRt
                        + ".messages(topic, extension, payload, event) VALUES ('t', 'broadcast', '{}', 'e')",
                "INSERT INTO aura_platform.projects(project_id, schema_name, realtime_schema_version) VALUES ('" + old
                        + "', '" + oldSchema + "', 2)",
                "COMMIT");

        awaitProvisioned(old);
        assertThat(fx.queryOne("SELECT count(*) FROM " + oldRt + ".messages")).isEqualTo("1");
        fx.sql("SELECT " + oldRt + ".send_binary('\\x00ff'::bytea, 'blob', 't', true)");
        assertThat(fx.queryOne("SELECT encode(binary_payload, 'hex') FROM " + oldRt + ".messages WHERE event = 'blob'"))
                .isEqualTo("00ff");
        assertThat(fx.queryOne("SELECT count(*) FROM pg_constraint WHERE conname = 'messages_payload_exclusive'"
                        + " AND conrelid = '" + oldRt + ".messages'::regclass"))
                .isEqualTo("1");
        assertThatThrownBy(
                        () -> fx.sql(
                                "INSERT INTO " + oldRt
                                        + ".messages(topic, extension, payload, binary_payload) VALUES ('t', 'broadcast', '{}', '\\x00')"))
                .as("a row carries payload or binary_payload, never both")
                .hasMessageContaining("messages_payload_exclusive");
    }

    @Test
    void theReadCheckAdmitsWhatThePoliciesAllowPerExtensionAndNothingElse() throws Exception {
        ChannelAccess.Reply acme = read("acme:room", claims("acme", false));
        assertThat(acme.error()).isNull();
        assertThat(acme.readBroadcast()).isTrue();
        assertThat(acme.readPresence()).isFalse();

        ChannelAccess.Reply other = read("acme:room", claims("globex", false));
        assertThat(other.readBroadcast()).isFalse();
        assertThat(other.readPresence()).isFalse();

        ChannelAccess.Reply lobby = read("lobby", claims("globex", false));
        assertThat(lobby.readBroadcast()).isFalse();
        assertThat(lobby.readPresence()).isTrue();

        ChannelAccess.Reply anon = ask(ChannelAccess.Request.read(
                fx.projectId, "acme:room", "anon", "{\"role\":\"anon\",\"ref\":\"" + fx.projectId + "\"}"));
        assertThat(anon.readBroadcast()).as("no policy for anon").isFalse();

        ChannelAccess.Reply service = ask(ChannelAccess.Request.read(fx.projectId, "anything", "service_role", "{}"));
        assertThat(service.readBroadcast()).isTrue();
        assertThat(service.readPresence()).isTrue();

        assertThat(ask(ChannelAccess.Request.read(fx.projectId, "acme:room", "postgres", "{}"))
                        .error())
                .startsWith("Unauthorized: role 'postgres' cannot use private channels");
        assertThat(ask(ChannelAccess.Request.read(UUID.randomUUID().toString(), "acme:room", "anon", "{}"))
                        .error())
                .startsWith("RealtimeDisabledForConfiguration");
        assertThat(checkRows()).as("the probe rows were rolled back").isZero();
    }

    /** A burst of one project's private joins queues for the project's connections; none is told "try again". */
    @Test
    void aBurstOfOneProjectsReadChecksIsAnsweredNotRefused() throws Exception {
        int burst = 48;
        List<java.util.concurrent.Future<ChannelAccess.Reply>> replies = new java.util.ArrayList<>();
        try (var pool = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < burst; i++) {
                int n = i;
                replies.add(pool.submit(() -> read("acme:burst-" + n, claims("acme", false))));
            }
        }
        for (var r : replies) {
            assertThat(r.get().error()).isNull();
            assertThat(r.get().readBroadcast()).isTrue();
        }
        assertThat(checkRows()).isZero();
    }

    @Test
    void aPolicyThatRaisesOrSleepsDeniesWithinTheStatementTimeout() throws Exception {
        ChannelAccess.Reply raised = read("boom", claims("acme", false));
        assertThat(raised.readBroadcast() || raised.readPresence()).isFalse();

        long t0 = System.nanoTime();
        ChannelAccess.Reply slept = read("slow", claims("acme", false));
        assertThat(slept.readBroadcast() || slept.readPresence()).isFalse();
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(3));

        // the project's other checks still run
        assertThat(read("acme:after", claims("acme", false)).readBroadcast()).isTrue();
    }

    @Test
    void theWriteCheckIsTheInsertPolicyAndLeavesNoRow() throws Exception {
        assertThat(ask(ChannelAccess.Request.write(
                                fx.projectId, "acme:room", "authenticated", claims("acme", true), "broadcast"))
                        .write())
                .isTrue();
        assertThat(ask(ChannelAccess.Request.write(
                                fx.projectId, "acme:room", "authenticated", claims("acme", false), "presence"))
                        .write())
                .isFalse();
        assertThat(ask(ChannelAccess.Request.write(
                                fx.projectId, "globex:room", "authenticated", claims("acme", true), "broadcast"))
                        .write())
                .isFalse();
        assertThat(ask(ChannelAccess.Request.write(
                                fx.projectId, "acme:room", "authenticated", claims("acme", true), "postgres_changes"))
                        .error())
                .startsWith("MalformedMessage");
        assertThat(checkRows()).isZero();
    }

    @Test
    void aPersistedMessageIsStoredUnderTheRoleAndPublishedFromTheSlotWithItsCommitId() throws Exception {
        ChannelAccess.Reply stored = ask(ChannelAccess.Request.persist(
                fx.projectId,
                "acme:persist",
                "authenticated",
                claims("acme", true),
                "note",
                JSON.readTree("{\"n\":1}")));
        assertThat(stored.error()).isNull();
        assertThat(stored.id()).hasSize(36);

        Captured c = Awaitility.await()
                .atMost(T)
                .until(
                        () -> captured.stream()
                                .filter(m -> m.message().id().equals(stored.id()))
                                .findFirst()
                                .orElse(null),
                        m -> m != null);
        assertThat(c.subject()).isEqualTo(Subjects.messages(fx.projectId, "acme:persist"));
        assertThat(c.eventId()).matches("[0-9A-F]+/[0-9A-F]+:0");
        assertThat(c.message().event()).isEqualTo("note");
        assertThat(c.message().payload().toString()).isEqualTo("{\"n\":1}");
        assertThat(c.message().privateChannel()).isTrue();

        ChannelAccess.Reply blind = ask(ChannelAccess.Request.persist(
                fx.projectId, "dropbox:1", "authenticated", claims("globex", false), "note", JSON.readTree("{}")));
        assertThat(blind.error()).as("storing needs the insert policy only").isNull();

        ChannelAccess.Reply refused = ask(ChannelAccess.Request.persist(
                fx.projectId, "acme:persist", "authenticated", claims("acme", false), "note", JSON.readTree("{}")));
        assertThat(refused.error())
                .isEqualTo("Unauthorized: You do not have permissions to write to this Channel topic: acme:persist");
    }

    @Test
    void replayIsTheNewestReadableMessagesOldestFirstAndOneTransactionKeepsItsOrder() throws Exception {
        long since = System.currentTimeMillis() - 60_000;
        fx.sql(
                "INSERT INTO " + rt + ".messages(topic, extension, event, payload, private, inserted_at)"
                        + " VALUES ('acme:replay', 'broadcast', 'old', '{\"n\":0}', true, now() - interval '2 hours')",
                "INSERT INTO " + rt + ".messages(topic, extension, event, payload, private)"
                        + " VALUES ('acme:replay', 'broadcast', 'public', '{}', false)");
        fx.sql(
                "BEGIN",
                "SELECT " + rt + ".send('{\"n\":1}', 'tx', 'acme:replay')",
                "SELECT " + rt + ".send('{\"n\":2}', 'tx', 'acme:replay')",
                "SELECT " + rt + ".send('{\"n\":3}', 'tx', 'acme:replay')",
                "COMMIT");
        for (int i = 4; i <= 30; i++) {
            fx.sql("SELECT " + rt + ".send('{\"n\":" + i + "}', 'one', 'acme:replay')");
        }

        List<Integer> capped = numbers(replay("acme:replay", claims("acme", false), since, 30));
        assertThat(capped)
                .as("capped at 25, the newest, oldest first")
                .hasSize(ChannelAccess.MAX_REPLAY_LIMIT)
                .isSorted()
                .endsWith(30)
                .startsWith(6);
        assertThat(numbers(replay("acme:replay", claims("acme", false), since, 3)))
                .containsExactly(28, 29, 30);

        fx.sql("DELETE FROM " + rt + ".messages WHERE topic = 'acme:replay' AND (payload ->> 'n')::int > 3");
        assertThat(numbers(replay("acme:replay", claims("acme", false), since, 25)))
                .as("one transaction's messages in the order they were inserted, not reversed")
                .containsExactly(1, 2, 3);
        assertThat(numbers(replay("acme:replay", claims("acme", false), 0, 25))).containsExactly(0, 1, 2, 3);
        assertThat(replay("acme:replay", claims("globex", false), 0, 25))
                .as("rows the role may not read are left out")
                .isEmpty();
    }

    private static List<ChannelAccess.Message> replay(String topic, String claims, long since, int limit)
            throws Exception {
        ChannelAccess.Reply r =
                ask(ChannelAccess.Request.replay(fx.projectId, topic, "authenticated", claims, since, limit));
        assertThat(r.error()).isNull();
        return r.messages();
    }

    private static List<Integer> numbers(List<ChannelAccess.Message> messages) {
        return messages.stream().map(m -> m.payload().path("n").asInt()).toList();
    }

    /**
     * What "commit order" means for replay, precisely (docs/design.md H2): live delivery follows
     * the slot, so the transaction that committed first is delivered first; replay orders by
     * insertion ({@code seq}), so transactions that overlap in time replay in the order their rows
     * were inserted.
     */
    @Test
    void overlappingTransactionsAreDeliveredInCommitOrderAndReplayedInInsertionOrder() throws Exception {
        long since = System.currentTimeMillis() - 1000;
        try (Connection first = fx.pg.connect();
                Connection second = fx.pg.connect()) {
            first.setAutoCommit(false);
            second.setAutoCommit(false);
            send(first, "inserted-first");
            send(second, "inserted-second");
            second.commit(); // commits first
            first.commit();
        }
        List<String> live = Awaitility.await()
                .atMost(T)
                .until(
                        () -> captured.stream()
                                .filter(c -> c.message().topic().equals("acme:overlap"))
                                .map(c -> c.message().event())
                                .toList(),
                        l -> l.size() == 2);
        assertThat(live).containsExactly("inserted-second", "inserted-first");
        assertThat(replay("acme:overlap", claims("acme", false), since, 10))
                .extracting(ChannelAccess.Message::event)
                .containsExactly("inserted-first", "inserted-second");
    }

    private static void send(Connection c, String event) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("SELECT " + rt + ".send('{}', '" + event + "', 'acme:overlap')");
        }
    }

    @Test
    void aMessagePersistedWithATtlIsReplayedUntilItExpiresAndThenDeleted() throws Exception {
        long since = System.currentTimeMillis() - 60_000;
        String writer = claims("acme", true);
        ChannelAccess.Reply shortLived = ask(ChannelAccess.Request.persist(
                fx.projectId, "acme:ttl", "authenticated", writer, "note", JSON.readTree("{\"n\":1}"), 4_000));
        ChannelAccess.Reply kept = ask(ChannelAccess.Request.persist(
                fx.projectId, "acme:ttl", "authenticated", writer, "note", JSON.readTree("{\"n\":2}")));
        ChannelAccess.Reply capped = ask(ChannelAccess.Request.persist(
                fx.projectId,
                "acme:ttl",
                "authenticated",
                writer,
                "note",
                JSON.readTree("{\"n\":3}"),
                10L * 365 * 24 * 3600 * 1000));
        assertThat(java.util.Arrays.asList(shortLived.error(), kept.error(), capped.error()))
                .containsOnlyNulls();
        String expiry = "SELECT coalesce(extract(epoch FROM expires_at - inserted_at)::text, 'null') FROM " + rt
                + ".messages WHERE id = '%s'";
        assertThat(Double.parseDouble(fx.queryOne(expiry.formatted(shortLived.id()))))
                .isBetween(3.9, 4.1);
        assertThat(fx.queryOne(expiry.formatted(kept.id())))
                .as("no ttl: the retention")
                .isEqualTo("null");
        assertThat(Double.parseDouble(fx.queryOne(expiry.formatted(capped.id()))))
                .as("a ttl beyond the retention is the retention (72 h)")
                .isEqualTo(72 * 3600.0);

        assertThat(numbers(replay("acme:ttl", claims("acme", false), since, 25)))
                .as("replayed before it expires")
                .containsExactly(1, 2, 3);
        Awaitility.await()
                .atMost(T)
                .until(
                        () -> numbers(replay("acme:ttl", claims("acme", false), since, 25)),
                        n -> n.equals(List.of(2, 3)));
        Awaitility.await()
                .atMost(T)
                .until(
                        () -> fx.queryOne("SELECT count(*) FROM " + rt + ".messages WHERE topic = 'acme:ttl'"),
                        "2"::equals);
        assertThat(fx.queryOne("SELECT count(*) FROM " + rt + ".messages WHERE id = '" + shortLived.id() + "'"))
                .as("the janitor deleted it once it expired")
                .isEqualTo("0");

        assertThat(ask(ChannelAccess.Request.persist(
                                fx.projectId, "acme:ttl", "authenticated", writer, "note", JSON.readTree("{}"), -1))
                        .error())
                .startsWith("MalformedMessage: persist.ttl");
    }

    @Test
    void theLeadersJanitorDeletesMessagesOlderThanTheRetentionOnly() {
        fx.sql(
                "INSERT INTO " + rt + ".messages(topic, extension, event, private, inserted_at)"
                        + " SELECT 'acme:janitor', 'broadcast', 'expired', true, now() - interval '73 hours'"
                        + " FROM generate_series(1, 1500)",
                "INSERT INTO " + rt + ".messages(topic, extension, event, private, inserted_at)"
                        + " VALUES ('acme:janitor', 'broadcast', 'kept', true, now() - interval '71 hours')");
        Awaitility.await()
                .atMost(T)
                .until(() -> fx.queryOne("SELECT string_agg(DISTINCT event, ',') FROM " + rt
                                + ".messages WHERE topic = 'acme:janitor'")
                        .equals("kept"));
    }

    @Test
    void tenantCodeCannotCommitProbeRowsIntoAnotherProjectNorRewriteMessages() throws Exception {
        String other = UUID.randomUUID().toString();
        String otherSchema = "project_" + other.replace('-', '_');
        String otherRt = "\"" + RealtimeSchemas.nameOf(other) + "\"";
        fx.sql(
                "CREATE SCHEMA \"" + otherSchema + "\"",
                "INSERT INTO aura_platform.projects(project_id, schema_name) VALUES ('" + other + "', '" + otherSchema
                        + "')");
        awaitProvisioned(other);
        // the hostile project's insert policy calls our project's probe, in its own committing
        // transaction (a persisted message): the probe rows would reach our private channel
        fx.sql("CREATE POLICY smuggles ON " + otherRt + ".messages FOR INSERT TO aura_authenticated"
                + " WITH CHECK ((SELECT count(*) FROM " + rt + ".aura_probe('acme:victim')) > 0)");
        ChannelAccess.Reply r = ask(ChannelAccess.Request.persist(
                other,
                "anything",
                "authenticated",
                "{\"role\":\"authenticated\",\"ref\":\"" + other + "\"}",
                "e",
                JSON.readTree("{}")));
        assertThat(r.error()).startsWith("Unauthorized");
        assertThat(fx.queryOne("SELECT count(*) FROM " + rt + ".messages WHERE topic = 'acme:victim'"))
                .isEqualTo("0");

        // the shared client role no longer reaches any project's realtime schema (docs/design.md I)
        try (Connection c = fx.pg.connect();
                Statement s = c.createStatement()) {
            s.execute("SET ROLE aura_authenticated");
            assertThatThrownBy(() -> s.execute("SELECT " + rt + ".aura_probe('acme:victim')"))
                    .isInstanceOfSatisfying(
                            SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("42501"));
        }
        String ownRole = "\"" + new ProjectIdentity(fx.projectId).role(ProjectIdentity.AUTHENTICATED) + "\"";
        // whoever calls a probe (here the project's own role): the transaction cannot commit
        try (Connection c = fx.pg.connect();
                Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            s.execute("SET ROLE " + ownRole);
            s.execute("SELECT " + rt + ".aura_probe('acme:victim')");
            assertThatThrownBy(c::commit)
                    .isInstanceOfSatisfying(
                            SQLException.class,
                            e -> assertThat(e.getMessage())
                                    .contains("messages with event aura_read_check are never committed"));
        }

        // the project's roles may read and insert (policies decide), never update or delete
        try (Connection c = fx.pg.connect();
                Statement s = c.createStatement()) {
            s.execute("SET ROLE " + ownRole);
            assertThatThrownBy(() -> s.execute("DELETE FROM " + rt + ".messages"))
                    .isInstanceOfSatisfying(
                            SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("42501"));
            assertThatThrownBy(() -> s.execute("UPDATE " + rt + ".messages SET private = false"))
                    .isInstanceOfSatisfying(
                            SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("42501"));
        }
        assertThat(captured).noneMatch(c -> c.message().topic().equals("acme:victim"));
    }
}
