package dev.aura.realtime.testkit;

import dev.aura.realtime.common.wire.Subjects;
import io.nats.client.NKey;
import io.nats.client.support.JwtUtils;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.Map;

/**
 * The users of one test nats-server and the {@code authorization} block that declares them, with
 * the product's subject permissions ({@code deploy/k8s/files/nats-permissions.conf}, the file the
 * chart and {@code scripts/stack.sh} use too). Generated fresh per server: random passwords, and
 * for the two product users an nkey each (seed file, and a creds file whose JWT the server, not in
 * operator mode, ignores while it checks the nkey signature).
 */
final class NatsUsers {
    /** Name of the permissions file beside the generated config. */
    static final String PERMISSIONS_FILE = "nats-permissions.conf";

    private static final SecureRandom RANDOM = new SecureRandom();

    private final Path dir;
    private final Map<NatsServer.User, String> passwords = new EnumMap<>(NatsServer.User.class);
    private final Map<NatsServer.User, String> nkeyPublicKeys = new EnumMap<>(NatsServer.User.class);

    /** Generates the credentials and writes the permissions, seed and creds files into {@code dir}. */
    NatsUsers(Path dir) {
        this.dir = dir;
        try {
            Files.createDirectories(dir);
            Files.copy(
                    RepoRoot.find().resolve("deploy/k8s/files").resolve(PERMISSIONS_FILE),
                    dir.resolve(PERMISSIONS_FILE));
            NKey account = NKey.createAccount(RANDOM);
            for (NatsServer.User user : NatsServer.User.values()) {
                byte[] secret = new byte[24];
                RANDOM.nextBytes(secret);
                passwords.put(user, HexFormat.of().formatHex(secret));
                if (user.permissionsVariable() == null) {
                    continue; // the unrestricted test user has a password only
                }
                NKey nkey = NKey.createUser(RANDOM);
                String publicKey = new String(nkey.getPublicKey());
                nkeyPublicKeys.put(user, publicKey);
                String seed = new String(nkey.getSeed());
                Files.writeString(seedFile(user), seed + "\n");
                String jwt =
                        JwtUtils.issueUserJWT(account, new String(account.getPublicKey()), publicKey, user.userName());
                Files.writeString(credsFile(user), creds(jwt, seed));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write NATS credentials into " + dir, e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot generate nkeys", e);
        }
    }

    String password(NatsServer.User user) {
        return passwords.get(user);
    }

    Path seedFile(NatsServer.User user) {
        return dir.resolve(user.userName() + ".seed");
    }

    Path credsFile(NatsServer.User user) {
        return dir.resolve(user.userName() + ".creds");
    }

    /** The config lines: the permissions include and one password user per user, one nkey user per product user. */
    String config() {
        StringBuilder sb = new StringBuilder("include ./" + PERMISSIONS_FILE + "\n");
        sb.append("authorization {\n  users = [\n");
        for (NatsServer.User user : NatsServer.User.values()) {
            String permissions =
                    user.permissionsVariable() == null ? "" : ", permissions: $" + user.permissionsVariable();
            sb.append("    {user: \"")
                    .append(user.userName())
                    .append("\", password: \"")
                    .append(passwords.get(user))
                    .append('"')
                    .append(permissions)
                    .append("}\n");
            if (nkeyPublicKeys.containsKey(user)) {
                sb.append("    {nkey: \"")
                        .append(nkeyPublicKeys.get(user))
                        .append('"')
                        .append(permissions)
                        .append("}\n");
            }
        }
        return sb.append("  ]\n}\n").toString();
    }

    /** The reply-subject prefix the permissions give {@code user} (ws-front's for the test user). */
    static String inboxPrefix(NatsServer.User user) {
        return switch (user) {
            case CDC_WORKER -> Subjects.CDC_WORKER_INBOX;
            case WS_FRONT -> Subjects.WS_FRONT_INBOX;
            // test code asks the cdc-worker's RPCs as ws-front does: the worker may publish replies
            // only to ws-front's reply subjects (no allow_responses, deploy/k8s/files/nats-permissions.conf)
            case TEST -> Subjects.WS_FRONT_INBOX;
        };
    }

    /** A credentials file in the layout nsc writes and jnats reads. */
    private static String creds(String jwt, String seed) {
        return "-----BEGIN NATS USER JWT-----\n" + jwt + "\n------END NATS USER JWT------\n\n"
                + "************************* IMPORTANT *************************\n"
                + "NKEY Seed printed below can be used to sign and prove identity.\n\n"
                + "-----BEGIN USER NKEY SEED-----\n" + seed + "\n------END USER NKEY SEED------\n";
    }
}
