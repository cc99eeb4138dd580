package dev.aura.realtime.common.config;

import java.time.Duration;
import java.util.List;

/**
 * The settings both binaries read, and only those: how to reach NATS ({@link NatsSettings}), the
 * keys of client JWTs ({@link JwtSettings}), the instance id ({@link InstanceId}) and the size of
 * the subscription registry bucket either may create. Each binary declares its own settings
 * beside its config records ({@code cdc.config.CdcSettings}, {@code front.config.FrontSettings})
 * and lists these in its {@code ALL}.
 */
public final class SharedSettings {
    private SharedSettings() {}

    public static final Setting<String> NATS_URL =
            Setting.text("NATS_URL", "nats://127.0.0.1:4222").doc("NATS server URL(s), comma-separated");
    public static final Setting<String> NATS_USER = Setting.optional("NATS_USER", "(unset)")
            .doc("NATS user name (user/password authentication, with NATS_PASSWORD)");
    public static final Setting<String> NATS_PASSWORD =
            Setting.optional("NATS_PASSWORD", "(unset)").doc("NATS password of NATS_USER; never logged");
    public static final Setting<String> NATS_NKEY_SEED_FILE = Setting.optional("NATS_NKEY_SEED_FILE", "(unset)")
            .doc("File holding an nkey user seed (SU...): nkey authentication");
    public static final Setting<String> NATS_CREDS_FILE = Setting.optional("NATS_CREDS_FILE", "(unset)")
            .doc("NATS credentials file (user JWT + nkey seed): decentralised JWT authentication");
    public static final Setting<String> NATS_TLS_CA_FILE = Setting.optional("NATS_TLS_CA_FILE", "(unset)")
            .doc("PEM file of the CA(s) that signed the NATS server certificate; turns TLS on (tls:// URLs without"
                    + " it trust the JVM's CAs)");
    public static final Setting<String> NATS_TLS_CERT_FILE = Setting.optional("NATS_TLS_CERT_FILE", "(unset)")
            .doc("PEM client certificate (chain) for NATS servers that verify clients; with NATS_TLS_KEY_FILE");
    public static final Setting<String> NATS_TLS_KEY_FILE =
            Setting.optional("NATS_TLS_KEY_FILE", "(unset)").doc("PEM (PKCS#8) private key of NATS_TLS_CERT_FILE");
    public static final Setting<Long> REGISTRY_BUCKET_MAX_BYTES = Setting.bytes(
                    "REGISTRY_BUCKET_MAX_BYTES", 64L * 1024 * 1024)
            .range(64 * 1024, Long.MAX_VALUE)
            .doc("Byte limit of the aura_subscriptions KV bucket, applied by whichever binary creates it or finds it"
                    + " different (keep equal in both)");

    public static final Setting<String> AURA_JWT_SECRET = Setting.required("AURA_JWT_SECRET")
            .doc("Legacy HS256 secret of client JWTs (at least 32 bytes); required (the cdc-worker also derives the"
                    + " project logins' passwords from it)");
    public static final Setting<Boolean> AURA_JWT_ACCEPT_HS256 = Setting.bool("AURA_JWT_ACCEPT_HS256", true)
            .doc("Accept HS256 tokens signed with AURA_JWT_SECRET (false: only the asymmetric keys of"
                    + " AURA_JWT_JWKS*)");
    public static final Setting<String> AURA_JWT_JWKS = Setting.optional("AURA_JWT_JWKS", "(unset)")
            .doc("Inline JWKS JSON ({\"keys\":[...]}) of the public keys that sign client JWTs: EC P-256 (ES256), RSA"
                    + " >= 2048 bits (RS256), OKP Ed25519 (EdDSA), chosen by kid");
    public static final Setting<String> AURA_JWT_JWKS_FILE = Setting.optional("AURA_JWT_JWKS_FILE", "(unset)")
            .doc("File holding a JWKS like AURA_JWT_JWKS (e.g. a mounted Secret); re-read when it changes (checked at"
                    + " most once a second)");
    public static final Setting<String> AURA_JWT_JWKS_URL = Setting.optional("AURA_JWT_JWKS_URL", "(unset)")
            .doc("http(s) URL of a JWKS (e.g. https://<project>.supabase.co/auth/v1/.well-known/jwks.json), cached"
                    + " and refreshed");
    public static final Setting<Duration> AURA_JWT_JWKS_CACHE_SECONDS = Setting.seconds(
                    "AURA_JWT_JWKS_CACHE_SECONDS", 300)
            .range(1, 86_400)
            .doc("How long a JWKS fetched from AURA_JWT_JWKS_URL (or, by the cdc-worker, a project's JWKS URL) is used"
                    + " before it is fetched again");
    public static final Setting<Duration> AURA_JWT_JWKS_MIN_REFRESH_SECONDS = Setting.seconds(
                    "AURA_JWT_JWKS_MIN_REFRESH_SECONDS", 30)
            .range(1, 86_400)
            .doc("Rate limit of AURA_JWT_JWKS_URL fetches (tokens with an unknown kid cause at most two per interval)"
                    + " and of each project issuer's JWKS URL (one per interval); shorter than"
                    + " AURA_JWT_JWKS_CACHE_SECONDS");

    public static final Setting<String> INSTANCE_ID = Setting.optional("INSTANCE_ID", "POD_NAME, else hostname-random")
            .doc("Instance id used in Aura-Origin and lease identity");
    public static final Setting<String> POD_NAME =
            Setting.optional("POD_NAME", "(unset)").doc("Pod name from the downward API (identity in Kubernetes)");

    /** Every shared setting, in the order of docs/configuration.md. */
    public static final List<Setting<?>> ALL = List.of(
            NATS_URL,
            NATS_USER,
            NATS_PASSWORD,
            NATS_NKEY_SEED_FILE,
            NATS_CREDS_FILE,
            NATS_TLS_CA_FILE,
            NATS_TLS_CERT_FILE,
            NATS_TLS_KEY_FILE,
            REGISTRY_BUCKET_MAX_BYTES,
            AURA_JWT_SECRET,
            AURA_JWT_ACCEPT_HS256,
            AURA_JWT_JWKS,
            AURA_JWT_JWKS_FILE,
            AURA_JWT_JWKS_URL,
            AURA_JWT_JWKS_CACHE_SECONDS,
            AURA_JWT_JWKS_MIN_REFRESH_SECONDS,
            INSTANCE_ID,
            POD_NAME);
}
