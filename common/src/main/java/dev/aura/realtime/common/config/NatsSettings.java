package dev.aura.realtime.common.config;

import static dev.aura.realtime.common.config.SharedSettings.NATS_CREDS_FILE;
import static dev.aura.realtime.common.config.SharedSettings.NATS_NKEY_SEED_FILE;
import static dev.aura.realtime.common.config.SharedSettings.NATS_PASSWORD;
import static dev.aura.realtime.common.config.SharedSettings.NATS_TLS_CA_FILE;
import static dev.aura.realtime.common.config.SharedSettings.NATS_TLS_CERT_FILE;
import static dev.aura.realtime.common.config.SharedSettings.NATS_TLS_KEY_FILE;
import static dev.aura.realtime.common.config.SharedSettings.NATS_URL;
import static dev.aura.realtime.common.config.SharedSettings.NATS_USER;

import io.nats.client.NKey;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * How a binary reaches NATS: the server URLs, at most one way to authenticate, and TLS
 * (docs/design.md G; variables in docs/configuration.md). Both binaries read it with
 * {@link #fromEnv} and build their jnats {@link Options} from {@link #builder}.
 *
 * <p>Secrets never leave this class in text: {@link #toString()} names the method and the files
 * but not the password, the seed or the key, and URLs print without their user info. Errors name
 * the variable and the file, never the content.
 *
 * <p>Seed and creds files are handed to jnats by path, which reads them again at every
 * (re)connect, so a rotated Kubernetes Secret takes effect at the next reconnect.
 *
 * @param servers NATS URLs ({@code nats://} or {@code tls://}), in the order given
 * @param auth how the client proves who it is
 * @param tls server CA and optional client certificate, or null for plain TCP (a {@code tls://}
 *     URL without it trusts the JVM's default CAs)
 */
public record NatsSettings(List<String> servers, Auth auth, Tls tls) {

    /** One authentication method, or none. */
    public sealed interface Auth {}

    /** No credentials: only for a NATS without authorization (never the chart's). */
    public record NoAuth() implements Auth {}

    /** {@code NATS_USER} and {@code NATS_PASSWORD}. */
    public record UserPassword(String user, String password) implements Auth {
        @Override
        public String toString() {
            return "UserPassword[user=" + user + ", password=(redacted)]";
        }
    }

    /** {@code NATS_NKEY_SEED_FILE}: a user nkey seed ({@code SU...}), the server knows its public key. */
    public record NkeySeedFile(Path file) implements Auth {}

    /** {@code NATS_CREDS_FILE}: a user JWT and its seed, for servers in operator (JWT) mode. */
    public record CredsFile(Path file) implements Auth {}

    /**
     * TLS settings.
     *
     * @param caFile PEM certificates to trust for the server, or null for the JVM's default CAs
     * @param certFile PEM client certificate chain, or null when the server does not verify clients
     * @param keyFile PEM PKCS#8 private key of {@code certFile}, null exactly when it is
     */
    public record Tls(Path caFile, Path certFile, Path keyFile) {}

    private static final Pattern PKCS8 =
            Pattern.compile("-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\\s]+)-----END PRIVATE KEY-----");

    public NatsSettings {
        servers = List.copyOf(servers);
    }

    /**
     * Reads {@code NATS_URL} and the {@code NATS_USER}/{@code NATS_PASSWORD},
     * {@code NATS_NKEY_SEED_FILE}, {@code NATS_CREDS_FILE} and {@code NATS_TLS_*} variables, and
     * checks that the files exist and parse (so a wrong mount fails at start-up, not at the first
     * reconnect).
     *
     * @throws ConfigException naming the variable: two authentication methods, a user without
     *     password or the reverse, a certificate without key or the reverse, an unreadable or
     *     malformed file
     */
    public static NatsSettings fromEnv(Env env) {
        List<String> servers = new ArrayList<>();
        for (String url : NATS_URL.read(env).split(",")) {
            if (!url.isBlank()) {
                servers.add(url.trim());
            }
        }
        if (servers.isEmpty()) {
            throw new ConfigException(NATS_URL.name() + " names no server");
        }
        List<Auth> methods = new ArrayList<>();
        var user = NATS_USER.find(env);
        var password = NATS_PASSWORD.find(env);
        if (user.isPresent() != password.isPresent()) {
            throw new ConfigException(NATS_USER.name() + " and " + NATS_PASSWORD.name() + " must be set together");
        }
        user.ifPresent(u -> methods.add(new UserPassword(u, password.get())));
        NATS_NKEY_SEED_FILE.find(env).ifPresent(f -> methods.add(new NkeySeedFile(readable(NATS_NKEY_SEED_FILE, f))));
        NATS_CREDS_FILE.find(env).ifPresent(f -> methods.add(new CredsFile(readable(NATS_CREDS_FILE, f))));
        if (methods.size() > 1) {
            throw new ConfigException("set one NATS authentication method, not " + methods.size() + ": "
                    + NATS_USER.name() + "/" + NATS_PASSWORD.name() + ", " + NATS_NKEY_SEED_FILE.name() + " or "
                    + NATS_CREDS_FILE.name());
        }
        Auth auth = methods.isEmpty() ? new NoAuth() : methods.get(0);
        if (auth instanceof NkeySeedFile seed) {
            checkSeed(seed.file());
        }
        var ca = NATS_TLS_CA_FILE.find(env).map(f -> readable(NATS_TLS_CA_FILE, f));
        var cert = NATS_TLS_CERT_FILE.find(env).map(f -> readable(NATS_TLS_CERT_FILE, f));
        var key = NATS_TLS_KEY_FILE.find(env).map(f -> readable(NATS_TLS_KEY_FILE, f));
        if (cert.isPresent() != key.isPresent()) {
            throw new ConfigException(
                    NATS_TLS_CERT_FILE.name() + " and " + NATS_TLS_KEY_FILE.name() + " must be set together");
        }
        Tls tls = ca.isEmpty() && cert.isEmpty() ? null : new Tls(ca.orElse(null), cert.orElse(null), key.orElse(null));
        NatsSettings settings = new NatsSettings(servers, auth, tls);
        settings.sslContext(); // parses the PEM files now
        return settings;
    }

    /**
     * A jnats builder with the servers, the credentials, TLS and {@code inboxPrefix} set; the
     * caller adds connection name, listeners and timings.
     *
     * @param inboxPrefix this binary's reply-subject prefix; the NATS permissions let each user
     *     subscribe only to its own ({@link dev.aura.realtime.common.wire.Subjects#CDC_WORKER_INBOX})
     * @throws ConfigException when a TLS file no longer parses
     */
    public Options.Builder builder(String inboxPrefix) {
        Options.Builder b =
                new Options.Builder().servers(servers.toArray(String[]::new)).inboxPrefix(inboxPrefix);
        switch (auth) {
            case NoAuth none -> {}
            case UserPassword up ->
                b.userInfo(up.user().toCharArray(), up.password().toCharArray());
            case NkeySeedFile seed ->
                b.authHandler(Nats.credentials(null, seed.file().toString()));
            case CredsFile creds -> b.authHandler(Nats.credentials(creds.file().toString()));
        }
        SSLContext ssl = sslContext();
        if (ssl != null) {
            b.sslContext(ssl);
        }
        return b;
    }

    /** The TLS context of {@link #tls}, or null without TLS settings. */
    SSLContext sslContext() {
        if (tls == null) {
            return null;
        }
        try {
            TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            if (tls.caFile() == null) {
                trust.init((KeyStore) null);
            } else {
                KeyStore cas = emptyStore();
                List<Certificate> certs = certificates(NATS_TLS_CA_FILE, tls.caFile());
                for (int i = 0; i < certs.size(); i++) {
                    cas.setCertificateEntry("ca-" + i, certs.get(i));
                }
                trust.init(cas);
            }
            KeyManagerFactory keys = null;
            if (tls.certFile() != null) {
                KeyStore store = emptyStore();
                List<Certificate> chain = certificates(NATS_TLS_CERT_FILE, tls.certFile());
                store.setKeyEntry("client", privateKey(tls.keyFile()), new char[0], chain.toArray(Certificate[]::new));
                keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                keys.init(store, new char[0]);
            }
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(keys == null ? null : keys.getKeyManagers(), trust.getTrustManagers(), null);
            return context;
        } catch (GeneralSecurityException | IOException e) {
            throw new ConfigException("NATS TLS settings are unusable: " + e.getMessage());
        }
    }

    private static KeyStore emptyStore() throws GeneralSecurityException, IOException {
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        return store;
    }

    private static List<Certificate> certificates(Setting<?> var, Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            List<Certificate> certs =
                    new ArrayList<>(CertificateFactory.getInstance("X.509").generateCertificates(in));
            if (certs.isEmpty()) {
                throw new ConfigException(var.name() + "=" + file + " holds no PEM certificate");
            }
            return certs;
        } catch (IOException | GeneralSecurityException e) {
            throw new ConfigException(var.name() + "=" + file + " is not a PEM certificate file: " + e.getMessage());
        }
    }

    /** A PKCS#8 PEM key (RSA, EC or EdDSA); older PKCS#1/SEC1 PEM is refused with the command that converts it. */
    private static PrivateKey privateKey(Path file) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new ConfigException(NATS_TLS_KEY_FILE.name() + "=" + file + " cannot be read: " + e.getMessage());
        }
        Matcher m = PKCS8.matcher(text);
        if (!m.find()) {
            throw new ConfigException(
                    NATS_TLS_KEY_FILE.name() + "=" + file
                            + " holds no PKCS#8 key (-----BEGIN PRIVATE KEY-----); convert it with "
                            + "`openssl pkcs8 -topk8 -nocrypt -in <key> -out <key.pk8>` (cert-manager: privateKey.encoding: PKCS8)");
        }
        byte[] der = Base64.getMimeDecoder().decode(m.group(1));
        try {
            for (String algorithm : List.of("RSA", "EC", "Ed25519", "Ed448")) {
                try {
                    return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
                } catch (GeneralSecurityException notThisAlgorithm) {
                    // try the next one
                }
            }
        } finally {
            Arrays.fill(der, (byte) 0);
        }
        throw new ConfigException(
                NATS_TLS_KEY_FILE.name() + "=" + file + " is not an RSA, EC or EdDSA PKCS#8 private key");
    }

    private static void checkSeed(Path file) {
        char[] seed;
        try {
            seed = new String(Files.readAllBytes(file), StandardCharsets.US_ASCII)
                    .trim()
                    .toCharArray();
        } catch (IOException e) {
            throw new ConfigException(NATS_NKEY_SEED_FILE.name() + "=" + file + " cannot be read: " + e.getMessage());
        }
        try {
            NKey key = NKey.fromSeed(seed);
            if (key.getType() != NKey.Type.USER) {
                throw new ConfigException(NATS_NKEY_SEED_FILE.name() + "=" + file + " is not a user seed (SU...)");
            }
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw new ConfigException(NATS_NKEY_SEED_FILE.name() + "=" + file + " is not an nkey seed");
        } finally {
            Arrays.fill(seed, '\0');
        }
    }

    private static Path readable(Setting<?> var, String value) {
        Path file = Path.of(value);
        if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
            throw new ConfigException(var.name() + "=" + value + " is not a readable file");
        }
        return file;
    }

    /** Servers without user info, the method and the file names; no secret. */
    @Override
    public String toString() {
        List<String> shown = servers.stream()
                .map(s -> s.replaceAll("(?<=://)[^@/]*@", "(redacted)@"))
                .toList();
        return "NatsSettings[servers=" + shown + ", auth=" + auth + ", tls=" + tls + "]";
    }
}
