package dev.aura.realtime.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * A throw-away certificate authority for a TLS test nats-server, made with the {@code openssl}
 * command: a CA, a server certificate for 127.0.0.1 and localhost, and a client certificate. Keys
 * are EC P-256 in PKCS#8 PEM (what OpenSSL 3 writes and the binaries read).
 *
 * @param caFile the CA certificate (PEM), what clients trust
 * @param serverCert the server certificate (PEM)
 * @param serverKey its key
 * @param clientCert a client certificate signed by the CA (PEM)
 * @param clientKey its key
 */
record NatsPki(Path caFile, Path serverCert, Path serverKey, Path clientCert, Path clientKey) {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final String HINT = "install openssl (apt-get install openssl)";

    /** Writes the CA and both certificates into {@code dir}. */
    static NatsPki create(Path dir) {
        Path openssl = Commands.findExecutable("openssl", List.of("/usr/bin", "/usr/local/bin"));
        if (openssl == null) {
            throw new IllegalStateException("openssl not found on PATH: " + HINT);
        }
        try {
            Files.createDirectories(dir);
            NatsPki pki = new NatsPki(
                    dir.resolve("ca.pem"),
                    dir.resolve("server.pem"),
                    dir.resolve("server.key"),
                    dir.resolve("client.pem"),
                    dir.resolve("client.key"));
            Path caKey = dir.resolve("ca.key");
            run(
                    openssl,
                    "req",
                    "-x509",
                    "-new",
                    "-nodes",
                    "-newkey",
                    "ec",
                    "-pkeyopt",
                    "ec_paramgen_curve:P-256",
                    "-keyout",
                    caKey.toString(),
                    "-out",
                    pki.caFile().toString(),
                    "-days",
                    "2",
                    "-subj",
                    "/CN=aura-test-ca");
            pki.sign(
                    openssl,
                    dir,
                    caKey,
                    "server",
                    pki.serverCert(),
                    pki.serverKey(),
                    "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
            pki.sign(openssl, dir, caKey, "client", pki.clientCert(), pki.clientKey(), "extendedKeyUsage=clientAuth\n");
            return pki;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write test certificates into " + dir, e);
        }
    }

    private void sign(Path openssl, Path dir, Path caKey, String name, Path cert, Path key, String extensions)
            throws IOException {
        Path csr = dir.resolve(name + ".csr");
        Path ext = dir.resolve(name + ".ext");
        Files.writeString(ext, extensions);
        run(
                openssl,
                "req",
                "-new",
                "-nodes",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-keyout",
                key.toString(),
                "-out",
                csr.toString(),
                "-subj",
                "/CN=aura-test-" + name);
        run(
                openssl,
                "x509",
                "-req",
                "-in",
                csr.toString(),
                "-CA",
                caFile.toString(),
                "-CAkey",
                caKey.toString(),
                "-CAcreateserial",
                "-out",
                cert.toString(),
                "-days",
                "2",
                "-extfile",
                ext.toString());
    }

    private static void run(Path openssl, String... args) {
        List<String> command = new java.util.ArrayList<>();
        command.add(openssl.toString());
        command.addAll(List.of(args));
        Commands.runOrFail(command, TIMEOUT, "openssl " + args[0] + " (" + HINT + ")");
    }
}
