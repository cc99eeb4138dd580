package dev.aura.realtime.e2e.security;

import static dev.aura.realtime.e2e.security.HostileProjects.attempt;
import static dev.aura.realtime.e2e.security.HostileProjects.awaitOrHarm;
import static dev.aura.realtime.e2e.security.HostileProjects.inserted;
import static dev.aura.realtime.e2e.security.HostileProjects.join;
import static dev.aura.realtime.e2e.security.HostileProjects.subscribeChanges;
import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.e2e.security.HostileProjects.Project;
import dev.aura.realtime.testkit.RealtimeJsClient;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 22, one project reaching into another (written before the fix, per-project database
 * roles): project A's policies and write checks must not read project B's rows under claims A
 * forges, nor make B's subscribers lose changes by signalling or locking B's sessions and tables.
 * Setup and the victim's checks: {@link HostileProjects}.
 *
 * <p>Results on the build before the fix (main at 6f4e072, PostgreSQL 15.18), two runs each, all
 * three FAIL with their controls holding:
 *
 * <ul>
 *   <li>{@link #aPolicyForgingClaimsReadsNothingOfAnotherProject}: FAILS on both paths: no canary
 *       row reaches A's subscriber (0 of 3) and the canary channel is refused, i.e. A's policy read
 *       B's vault under forged claims (the controls: a secret B lacks is never seen and A's own
 *       vault is).
 *   <li>{@link #aPolicyThatSignalsEveryBackendCostsAnotherProjectNoRow}: FAILS: B, alone 20 of 20,
 *       got 13 and 7 of its 20 rows while A's policy cancelled and terminated the login's backends.
 *   <li>{@link #aWriteCheckLockingAnotherProjectsTableCostsItNothing}: FAILS: B got 7 of 10 rows
 *       (both runs) while A's write checks held B's table in ACCESS EXCLUSIVE mode; B's private
 *       channel kept working and the lock was not left held.
 * </ul>
 *
 * <p>With the per-project identity (docs/design.md I) every case passes: A's code runs as A's role,
 * which has no USAGE on B's schemas (no read, no lock) and can signal no backend.
 */
class ProjectCrossingE2EIT {
    private HostileProjects h;
    private Project a;
    private Project b;

    @BeforeEach
    void start() {
        h = HostileProjects.start();
        a = h.a;
        b = h.b;
    }

    @AfterEach
    void stop() {
        if (h != null) {
            h.close();
        }
    }

    @Test
    void aPolicyForgingClaimsReadsNothingOfAnotherProject() {
        // true when the secret is readable by any means: as called, after RESET ROLE, after SET ROLE
        // or set_config('role') to any shared or victim role, always under forged claims
        h.asOwner(
                a,
                "CREATE FUNCTION " + a.s() + ".readable(tbl text, org text, secret text) RETURNS boolean"
                        + " LANGUAGE plpgsql AS $f$ DECLARE orig text := current_user; seen boolean := false; r text;"
                        + " q text := format('SELECT EXISTS (SELECT 1 FROM %s WHERE secret = %L)', tbl, secret);"
                        + " BEGIN"
                        + " PERFORM set_config('request.jwt.claims', json_build_object('org', org, 'role',"
                        + " 'authenticated', 'sub', gen_random_uuid())::text, true);"
                        + " BEGIN EXECUTE q INTO seen; EXCEPTION WHEN OTHERS THEN NULL; END;"
                        + " IF NOT coalesce(seen, false) THEN BEGIN RESET ROLE; EXECUTE q INTO seen;"
                        + " EXCEPTION WHEN OTHERS THEN NULL; END; END IF;"
                        + " FOR r IN SELECT rolname FROM pg_roles WHERE rolname IN ('aura_anon', 'aura_authenticated', '"
                        + b.owner() + "') OR starts_with(rolname, '" + b.rolePrefix() + "') LOOP"
                        + " EXIT WHEN coalesce(seen, false);"
                        + " BEGIN RESET ROLE; PERFORM set_config('role', r, true); EXECUTE q INTO seen;"
                        + " EXCEPTION WHEN OTHERS THEN NULL; END;"
                        + " IF NOT coalesce(seen, false) THEN BEGIN RESET ROLE; EXECUTE format('SET ROLE %I', r);"
                        + " EXECUTE q INTO seen; EXCEPTION WHEN OTHERS THEN NULL; END; END IF;"
                        + " END LOOP;"
                        + " BEGIN PERFORM set_config('role', orig, true); EXCEPTION WHEN OTHERS THEN NULL; END;"
                        + " RETURN coalesce(seen, false); END $f$",
                "GRANT EXECUTE ON FUNCTION " + a.s() + ".readable(text, text, text) TO PUBLIC");
        String bSecret = "NOT " + a.s() + ".readable('" + b.table("vault") + "', 'b-corp', 'b-secret')";
        // the control: the same probe on A's own vault must read it, or the test proves nothing
        h.table(a, "own_vault", "(id int PRIMARY KEY, secret text)", "auth.jwt() ->> 'org' = 'a-corp'");
        h.asOwner(a, "INSERT INTO " + a.table("own_vault") + " VALUES (1, 'a-secret')");
        String ownSecret = "NOT " + a.s() + ".readable('" + a.table("own_vault") + "', 'a-corp', 'a-secret')";
        // the other control: a secret B does not have is never read, within the statement timeout
        String noSecret = "NOT " + a.s() + ".readable('" + b.table("vault") + "', 'b-corp', 'not-there')";
        h.table(a, "canary", "(id int PRIMARY KEY)", bSecret);
        h.table(a, "blank", "(id int PRIMARY KEY)", noSecret);
        h.table(a, "control", "(id int PRIMARY KEY)", ownSecret);
        String rt = a.rt();
        h.asOwner(
                a,
                "CREATE POLICY probe_read ON " + rt + ".messages FOR SELECT TO aura_authenticated USING ((" + rt
                        + ".topic() = 'a-canary' AND " + bSecret + ") OR (" + rt + ".topic() = 'a-control' AND "
                        + ownSecret + ") OR (" + rt + ".topic() = 'a-blank' AND " + noSecret + "))");
        String before = h.logins();

        RealtimeJsClient attacker = h.client(a, "a-corp");
        subscribeChanges(attacker, "canary", "canary");
        subscribeChanges(attacker, "control", "control");
        subscribeChanges(attacker, "blank", "blank");
        h.pg.execute("INSERT INTO " + a.table("control") + " VALUES (1)");
        h.pg.execute("INSERT INTO " + a.table("blank") + " VALUES (1)");
        for (int i = 1; i <= 3; i++) {
            h.pg.execute("INSERT INTO " + a.table("canary") + " VALUES (" + i + ")");
        }
        List<String> harms = new ArrayList<>();
        awaitOrHarm(
                harms,
                () -> "control: the probe did not answer in time when nothing is read",
                () -> inserted(attacker, "blank").contains(1));
        awaitOrHarm(
                harms,
                () -> "RLS path: A read B's vault (canary rows delivered: " + inserted(attacker, "canary")
                        + " of 1..3)",
                () -> inserted(attacker, "canary").equals(Set.of(1, 2, 3)));

        assertThat(join(attacker, "a-control", Map.of()))
                .as("control: the read check's probe reads A's own vault")
                .isEqualTo("CHANNEL_ERROR");
        assertThat(join(attacker, "a-blank", Map.of()))
                .as("control: the read check's probe answers in time when nothing is read")
                .isEqualTo("SUBSCRIBED");
        String canary = join(attacker, "a-canary", Map.of());
        if (!"SUBSCRIBED".equals(canary)) {
            harms.add("private-channel read check: A read B's vault (canary join: " + canary + ")");
        }
        harms.addAll(h.harms(before));
        assertThat(inserted(attacker, "control"))
                .as("control: A's probe reads A's own vault under forged claims (else this test proves nothing)")
                .isEmpty();
        assertThat(harms).isEmpty();
    }

    @Test
    void aPolicyThatSignalsEveryBackendCostsAnotherProjectNoRow() throws Exception {
        h.asOwner(
                b,
                "CREATE FUNCTION " + b.s() + ".slow() RETURNS boolean LANGUAGE plpgsql AS $f$"
                        + " BEGIN PERFORM pg_sleep(0.05); RETURN true; END $f$",
                "GRANT EXECUTE ON FUNCTION " + b.s() + ".slow() TO PUBLIC");
        h.table(b, "calm", "(id int PRIMARY KEY)", b.s() + ".slow()");
        h.asOwner(
                a,
                "CREATE FUNCTION " + a.s() + ".signal_all(id int) RETURNS boolean LANGUAGE plpgsql AS $f$"
                        + " DECLARE orig text := current_user; p int; BEGIN"
                        + " BEGIN RESET ROLE; EXCEPTION WHEN OTHERS THEN NULL; END;"
                        + " FOR p IN SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid() LOOP"
                        + " BEGIN IF id % 2 = 0 THEN PERFORM pg_cancel_backend(p); ELSE PERFORM pg_terminate_backend(p);"
                        + " END IF; EXCEPTION WHEN OTHERS THEN NULL; END; END LOOP;"
                        + " BEGIN PERFORM set_config('role', orig, true); EXCEPTION WHEN OTHERS THEN NULL; END;"
                        + " RETURN true; END $f$",
                "GRANT EXECUTE ON FUNCTION " + a.s() + ".signal_all(int) TO PUBLIC");
        h.table(a, "noisy", "(id int PRIMARY KEY)", a.s() + ".signal_all(id)");
        String before = h.logins();
        RealtimeJsClient victim = h.client(b, "b-corp");
        subscribeChanges(victim, "calm", "calm");
        RealtimeJsClient attacker = h.client(a, "a-corp");
        subscribeChanges(attacker, "noisy", "noisy");
        List<String> harms = new ArrayList<>();

        // B alone first: its 50 ms policy delivers every row, or the attack below proves nothing
        insertSpaced(b.table("calm"), 1, 20);
        awaitOrHarm(harms, () -> "calm", () -> inserted(victim, "calm").size() == 20);
        assertThat(inserted(victim, "calm")).as("B alone, before A signals").hasSize(20);

        AtomicBoolean stop = new AtomicBoolean();
        Thread noise = Thread.ofPlatform().name("project-a-noise").start(() -> {
            for (int id = 1; !stop.get() && id < 2000; id++) {
                try {
                    h.pg.execute("INSERT INTO " + a.table("noisy") + " VALUES (" + id + ")");
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                } catch (RuntimeException e) {
                    // a lost insert of A's is A's business
                }
            }
        });
        try {
            insertSpaced(b.table("calm"), 21, 40);
        } finally {
            stop.set(true);
            noise.join();
        }
        Set<Integer> expected = IntStream.rangeClosed(1, 40).boxed().collect(Collectors.toSet());
        awaitOrHarm(
                harms,
                () -> "B's subscriber lost rows while A signalled: got "
                        + inserted(victim, "calm").stream().filter(i -> i > 20).count() + " of 20 (missing "
                        + expected.stream()
                                .filter(i -> !inserted(victim, "calm").contains(i))
                                .toList() + ")",
                () -> inserted(victim, "calm").containsAll(expected));
        harms.addAll(h.harms(before));
        assertThat(harms).isEmpty();
    }

    private void insertSpaced(String table, int from, int to) throws InterruptedException {
        for (int i = from; i <= to; i++) {
            h.pg.execute("INSERT INTO " + table + " VALUES (" + i + ")");
            Thread.sleep(100); // spacing the writes, not waiting for a result
        }
    }

    @Test
    void aWriteCheckLockingAnotherProjectsTableCostsItNothing() throws Exception {
        h.table(b, "items", "(id int PRIMARY KEY, body text)", "true");
        // granted as Supabase grants public tables to its client roles: LOCK ... ACCESS EXCLUSIVE needs UPDATE
        h.asOwner(b, "GRANT ALL ON " + b.table("items") + " TO aura_anon, aura_authenticated");
        String lock = "LOCK TABLE " + b.table("items") + " IN ACCESS EXCLUSIVE MODE";
        h.asOwner(
                a,
                "CREATE FUNCTION " + a.s() + ".lock_b() RETURNS boolean LANGUAGE plpgsql AS $f$"
                        + " DECLARE orig text := current_user; BEGIN"
                        + " BEGIN " + lock + "; EXCEPTION WHEN OTHERS THEN NULL; END;"
                        + " BEGIN RESET ROLE; PERFORM set_config('role', 'aura_authenticated', true); " + lock + ";"
                        + " EXCEPTION WHEN OTHERS THEN NULL; END;"
                        + " BEGIN PERFORM set_config('role', orig, true); EXCEPTION WHEN OTHERS THEN NULL; END;"
                        + " PERFORM pg_sleep(0.2); RETURN true; END $f$",
                "GRANT EXECUTE ON FUNCTION " + a.s() + ".lock_b() TO PUBLIC",
                "CREATE POLICY a_read ON " + a.rt() + ".messages FOR SELECT TO aura_authenticated USING (true)",
                "CREATE POLICY a_lock ON " + a.rt() + ".messages FOR INSERT TO aura_authenticated WITH CHECK (" + a.s()
                        + ".lock_b())");
        String before = h.logins();
        RealtimeJsClient victim = h.client(b, "b-corp");
        subscribeChanges(victim, "items", "items");
        RealtimeJsClient attacker = h.client(a, "a-corp");
        attacker.channel("a-lock", Map.of("private", true));
        List<String> harms = new ArrayList<>();

        AtomicBoolean stop = new AtomicBoolean();
        Thread hammer = Thread.ofPlatform().name("project-a-locks").start(() -> {
            for (int n = 0; !stop.get() && n < 2000; n++) {
                int i = n;
                // every REST send is a write check (an insert under A's policy, rolled back); every
                // fourth is persisted (committed)
                attempt(() -> {
                    if (i % 4 == 3) {
                        attacker.httpSendPersisted("a-lock", "p", Map.of("n", i));
                    } else {
                        attacker.httpSend("a-lock", "w", Map.of("n", i));
                    }
                });
            }
        });
        try {
            insertSpaced(b.table("items"), 1, 10);
            h.victimDelivers(harms); // B's private channel, while A locks
        } finally {
            stop.set(true);
            hammer.join();
        }
        awaitOrHarm(
                harms,
                () -> "B's subscriber lost rows while A locked its table: got " + inserted(victim, "items"),
                () -> inserted(victim, "items").size() == 10);
        try (Connection c = h.pg.connect();
                Statement s = c.createStatement()) {
            s.execute("SET lock_timeout = '2s'");
            try (ResultSet rs = s.executeQuery("SELECT count(*) FROM " + b.table("items"))) {
                rs.next();
            }
        } catch (Exception e) {
            harms.add("B's table is still locked after A stopped: " + e.getMessage());
        }
        harms.addAll(h.harms(before));
        assertThat(harms).isEmpty();
    }
}
