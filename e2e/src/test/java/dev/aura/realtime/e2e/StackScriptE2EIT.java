package dev.aura.realtime.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.testkit.Jars;
import dev.aura.realtime.testkit.Ports;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Issue 40, "the first ten minutes": {@code scripts/stack.sh} as a new user runs it, each run in a
 * state directory of its own ({@code STACK_DIR}) on free ports. A taken port stops {@code up}
 * before anything starts; an {@code up} that fails later stops what it started and says so; the
 * ports of an {@code up} are remembered by {@code status}; {@code enable <table>} enables realtime
 * and grants SELECT to anon and authenticated, and says how to create a table that is missing.
 */
class StackScriptE2EIT {
    private static final long UP_SECONDS = 300;

    record Run(int exit, String output) {}

    private final Path stackDir;
    private final int pgPort = Ports.forService();
    private final int natsPort = Ports.forService();
    private final int natsMonitorPort = Ports.forService();
    private final int cdcPort = Ports.forService();
    private final int wsPort = Ports.forService();

    StackScriptE2EIT() throws IOException {
        // Postgres runs as the postgres user (the script is run as root here): it must reach .stack/pg
        stackDir = Files.createTempDirectory(
                "stack-script", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
    }

    private Map<String, String> ports() {
        return Map.of(
                "STACK_PG_PORT", String.valueOf(pgPort),
                "STACK_NATS_PORT", String.valueOf(natsPort),
                "STACK_NATS_MONITOR_PORT", String.valueOf(natsMonitorPort),
                "CDC_HTTP_PORT", String.valueOf(cdcPort),
                "WS_PORT", String.valueOf(wsPort));
    }

    private Run stack(Map<String, String> env, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("bash", "scripts/stack.sh"));
        command.addAll(List.of(args));
        ProcessBuilder pb =
                new ProcessBuilder(command).directory(Jars.repoRoot().toFile()).redirectErrorStream(true);
        pb.environment().put("STACK_DIR", stackDir.toString());
        for (String name : List.of(
                "STACK_PG_PORT",
                "STACK_NATS_PORT",
                "STACK_NATS_MONITOR_PORT",
                "CDC_HTTP_PORT",
                "WS_PORT",
                "AURA_JWT_SECRET")) {
            pb.environment().remove(name);
        }
        pb.environment().putAll(env);
        Process p = pb.start();
        byte[] out;
        try {
            out = p.getInputStream().readAllBytes();
        } finally {
            if (!p.waitFor(UP_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        }
        return new Run(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }

    private static boolean listening(int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private void down() throws Exception {
        stack(Map.of(), "down", "--purge");
    }

    @Test
    void aTakenPortStopsUpBeforeAnythingStartsAndNamesTheVariable() throws Exception {
        try (ServerSocket other = new ServerSocket(natsPort)) {
            Run up = stack(ports(), "up", "--services-only");
            assertThat(up.exit()).as(up.output()).isNotZero();
            assertThat(up.output())
                    .contains("port " + natsPort + " (NATS; STACK_NATS_PORT) is taken by another program")
                    .contains("nothing was started");
            assertThat(listening(pgPort)).as("Postgres was not started").isFalse();
        } finally {
            down();
        }
    }

    @Test
    void anUpThatFailsLaterStopsWhatItStartedAndSaysSo() throws Exception {
        try {
            Map<String, String> env = new HashMap<>(ports());
            env.put("AURA_JWT_SECRET", "too short"); // ws-front refuses it (under 32 bytes) and exits
            Run up = stack(env, "up");
            assertThat(up.exit()).as(up.output()).isNotZero();
            assertThat(up.output())
                    .contains("ws-front on port " + wsPort + ": the process exited")
                    .contains("up failed; stopped what it had started: postgres nats-server cdc-worker ws-front");
            assertThat(listening(cdcPort)).as("cdc-worker stopped").isFalse();
            assertThat(listening(pgPort)).as("Postgres stopped").isFalse();
            assertThat(listening(natsPort)).as("nats-server stopped").isFalse();
        } finally {
            down();
        }
    }

    @Test
    void statusRemembersThePortsAndEnableMakesATableOfOnesOwnReadable() throws Exception {
        try {
            Run up = stack(ports(), "up");
            assertThat(up.exit()).as(up.output()).isZero();

            Run status = stack(Map.of(), "status");
            assertThat(status.output())
                    .as("status without the port variables")
                    .containsPattern("postgres +running +127\\.0\\.0\\.1:" + pgPort)
                    .containsPattern("nats +running +127\\.0\\.0\\.1:" + natsPort)
                    .containsPattern("ws-front +running +ws://localhost:" + wsPort);

            String schema = "project_00000000_0000_0000_0000_00000000d3e0";
            Run missing = stack(Map.of(), "enable", "rooms");
            assertThat(missing.exit()).as(missing.output()).isNotZero();
            assertThat(missing.output())
                    .contains("enabling " + schema + ".rooms failed (HTTP 404)")
                    .contains("table rooms does not exist")
                    .contains("create table " + schema + ".rooms (id bigserial primary key, body text)");

            psql("create table " + schema + ".rooms (id bigserial primary key, body text)");
            Run enable = stack(Map.of(), "enable", "rooms");
            assertThat(enable.exit()).as(enable.output()).isZero();
            assertThat(psql("select enabled from aura_platform.realtime_tables where project_id ="
                            + " '00000000-0000-0000-0000-00000000d3e0' and table_name = 'rooms'"))
                    .isEqualTo("t");
            assertThat(psql("select has_table_privilege('aura_anon', '" + schema + ".rooms', 'SELECT')"
                            + " and has_table_privilege('aura_authenticated', '" + schema + ".rooms', 'SELECT')"))
                    .isEqualTo("t");
            assertThat(psql("select relreplident from pg_class where oid = '" + schema + ".rooms'::regclass"))
                    .isEqualTo("f");

            Run again = stack(Map.of(), "up");
            assertThat(again.exit())
                    .as("a second up, without the port variables: " + again.output())
                    .isZero();
            assertThat(again.output()).contains("nats-server already running on 127.0.0.1:" + natsPort);
        } finally {
            down();
        }
    }

    private String psql(String sql) throws Exception {
        Process p = new ProcessBuilder(
                        "/usr/lib/postgresql/15/bin/psql",
                        "-X",
                        "-tA",
                        "-h",
                        "127.0.0.1",
                        "-p",
                        String.valueOf(pgPort),
                        "-U",
                        "postgres",
                        "-d",
                        "postgres",
                        "-v",
                        "ON_ERROR_STOP=1",
                        "-c",
                        sql)
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertThat(p.waitFor()).as(sql + ": " + out).isZero();
        return out;
    }
}
