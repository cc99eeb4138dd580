package dev.aura.realtime.front.testing;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/** A real {@code nats-server -js} on a free port with a temporary store, for integration tests. */
public final class NatsServerProcess implements AutoCloseable {
    private static final String BINARY = "/usr/sbin/nats-server";

    private final Process process;
    private final Path storeDir;
    private final int port;

    public NatsServerProcess() throws IOException, InterruptedException {
        if (!new File(BINARY).canExecute()) {
            fail("install nats-server: scripts/stack.sh install (" + BINARY + " not found)");
        }
        this.port = freePort();
        this.storeDir = Files.createTempDirectory("nats-js-");
        Path log = storeDir.resolve("nats.log");
        this.process = new ProcessBuilder(
                        BINARY, "-js", "-a", "127.0.0.1", "-p", Integer.toString(port), "-sd", storeDir.toString())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                fail("nats-server exited: " + Files.readString(log));
            }
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return;
            } catch (IOException notYet) {
                Thread.sleep(50);
            }
        }
        close();
        fail("nats-server did not listen on " + port + " within 15 s");
    }

    public String url() {
        return "nats://127.0.0.1:" + port;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Override
    public void close() throws IOException, InterruptedException {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
        try (Stream<Path> files = Files.walk(storeDir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
