package dev.aura.realtime.common.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nats.client.NKey;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NatsSettingsTest {
    @TempDir
    Path dir;

    @Test
    void withoutCredentialsItConnectsAnonymouslyToTheDefaultUrl() {
        NatsSettings s = NatsSettings.fromEnv(new Env(Map.of()));
        assertThat(s.servers()).containsExactly("nats://127.0.0.1:4222");
        assertThat(s.auth()).isInstanceOf(NatsSettings.NoAuth.class);
        assertThat(s.tls()).isNull();
    }

    @Test
    void aPasswordNeverAppearsInTextNorDoesUserInfoInAUrl() {
        NatsSettings s = NatsSettings.fromEnv(new Env(Map.of(
                "NATS_URL", "nats://a:4222, nats://u:url-secret@b:4222",
                "NATS_USER", "aura-ws-front",
                "NATS_PASSWORD", "hunter2-secret")));
        assertThat(s.servers()).containsExactly("nats://a:4222", "nats://u:url-secret@b:4222");
        assertThat(s.auth()).isEqualTo(new NatsSettings.UserPassword("aura-ws-front", "hunter2-secret"));
        assertThat(s.toString()).contains("aura-ws-front").doesNotContain("hunter2", "url-secret");
        assertThat(s.builder("_INBOX_x").build().getInboxPrefix()).isEqualTo("_INBOX_x.");
    }

    @Test
    void oneAuthenticationMethodAtATimeAndUserWithPassword() throws Exception {
        Path seed = Files.writeString(
                dir.resolve("seed"),
                new String(NKey.createUser(new SecureRandom()).getSeed()));
        assertThatThrownBy(() -> NatsSettings.fromEnv(new Env(
                        Map.of("NATS_USER", "u", "NATS_PASSWORD", "p", "NATS_NKEY_SEED_FILE", seed.toString()))))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("one NATS authentication method");
        assertThatThrownBy(() -> NatsSettings.fromEnv(new Env(Map.of("NATS_USER", "u"))))
                .hasMessageContaining("NATS_USER and NATS_PASSWORD must be set together");
        assertThat(NatsSettings.fromEnv(new Env(Map.of("NATS_NKEY_SEED_FILE", seed.toString())))
                        .auth())
                .isEqualTo(new NatsSettings.NkeySeedFile(seed));
    }

    @Test
    void unusableFilesFailAtStartNamingTheVariableNotTheContent() throws Exception {
        assertThatThrownBy(() -> NatsSettings.fromEnv(new Env(Map.of("NATS_CREDS_FILE", "/nonexistent/x.creds"))))
                .hasMessageContaining("NATS_CREDS_FILE=/nonexistent/x.creds is not a readable file");
        Path notASeed = Files.writeString(dir.resolve("bad-seed"), "SUPERSECRETBUTWRONG");
        assertThatThrownBy(() -> NatsSettings.fromEnv(new Env(Map.of("NATS_NKEY_SEED_FILE", notASeed.toString()))))
                .hasMessageContaining("is not an nkey seed")
                .hasMessageNotContaining("SUPERSECRET");
        Path account = Files.writeString(
                dir.resolve("account-seed"),
                new String(NKey.createAccount(new SecureRandom()).getSeed()));
        assertThatThrownBy(() -> NatsSettings.fromEnv(new Env(Map.of("NATS_NKEY_SEED_FILE", account.toString()))))
                .hasMessageContaining("not a user seed");
        Path notPem = Files.writeString(dir.resolve("ca.pem"), "not a certificate");
        assertThatThrownBy(() -> NatsSettings.fromEnv(new Env(Map.of("NATS_TLS_CA_FILE", notPem.toString()))))
                .hasMessageContaining("NATS_TLS_CA_FILE");
        Path pkcs1 = Files.writeString(
                dir.resolve("key.pem"), "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n");
        assertThatThrownBy(() -> NatsSettings.fromEnv(new Env(
                        Map.of("NATS_TLS_CERT_FILE", notPem.toString(), "NATS_TLS_KEY_FILE", pkcs1.toString()))))
                .isInstanceOf(ConfigException.class);
        assertThatThrownBy(() -> NatsSettings.fromEnv(new Env(Map.of("NATS_TLS_KEY_FILE", pkcs1.toString()))))
                .hasMessageContaining("must be set together");
    }
}
