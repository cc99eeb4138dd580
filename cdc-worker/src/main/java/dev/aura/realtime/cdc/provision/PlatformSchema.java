package dev.aura.realtime.cdc.provision;

import dev.aura.realtime.cdc.catalog.PlatformDb;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates or upgrades, idempotently and under an advisory lock (several workers start at
 * once), what the product needs in the database: schema {@code aura_platform} with
 * {@code projects}, {@code realtime_tables}, {@code project_limits}, {@code api_keys} and
 * {@code token_issuers}, the NOLOGIN roles {@code aura_anon} and
 * {@code aura_authenticated}, Supabase's {@code auth.jwt()}, {@code auth.uid()},
 * {@code auth.role()} reading the {@code request.jwt.claims} setting, so policies written for
 * Supabase ({@code using (owner_id = auth.uid())}) work unchanged, the per-key check function
 * {@code aura_rls.visible_each} of tenant SQL, and, when the login is a superuser, the event
 * triggers that keep all of this and the projects' runners uneditable by tenant code
 * ({@link Confinement}).
 */
public final class PlatformSchema {
    private static final Logger log = LoggerFactory.getLogger(PlatformSchema.class);
    /** Arbitrary constant: pg_advisory_xact_lock key of the bootstrap and of the tenant login's provisioning. */
    static final long LOCK_KEY = 0x4155524152544CL;

    private static final String[] DDL = {
        "CREATE SCHEMA IF NOT EXISTS aura_platform",
        """
        CREATE TABLE IF NOT EXISTS aura_platform.projects(
          project_id uuid PRIMARY KEY,
          schema_name text NOT NULL UNIQUE)""",
        """
        CREATE TABLE IF NOT EXISTS aura_platform.realtime_tables(
          project_id uuid REFERENCES aura_platform.projects,
          table_name text,
          enabled boolean NOT NULL DEFAULT true,
          updated_at timestamptz NOT NULL DEFAULT now(),
          PRIMARY KEY (project_id, table_name))""",
        // Per-project overrides of ws-front's per-project limits (docs/design.md D8); NULL = the
        // global default. Names follow Supabase's tenant settings.
        """
        CREATE TABLE IF NOT EXISTS aura_platform.project_limits(
          project_id uuid PRIMARY KEY REFERENCES aura_platform.projects ON DELETE CASCADE,
          max_concurrent_users integer CHECK (max_concurrent_users > 0),
          max_events_per_second integer CHECK (max_events_per_second > 0),
          max_joins_per_second integer CHECK (max_joins_per_second > 0),
          max_channels_per_client integer CHECK (max_channels_per_client > 0),
          max_bytes_per_second integer CHECK (max_bytes_per_second > 0),
          max_payload_size_in_kb integer CHECK (max_payload_size_in_kb > 0),
          max_presence_events_per_second integer CHECK (max_presence_events_per_second > 0),
          updated_at timestamptz NOT NULL DEFAULT now())""",
        """
        DO $$ BEGIN
          IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'aura_anon') THEN CREATE ROLE aura_anon NOLOGIN; END IF;
          IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'aura_authenticated') THEN CREATE ROLE aura_authenticated NOLOGIN; END IF;
        END $$""",
        "CREATE SCHEMA IF NOT EXISTS auth",
        """
        CREATE OR REPLACE FUNCTION auth.jwt() RETURNS jsonb LANGUAGE sql STABLE AS
        $$ SELECT coalesce(nullif(current_setting('request.jwt.claims', true), ''), '{}')::jsonb $$""",
        """
        CREATE OR REPLACE FUNCTION auth.uid() RETURNS uuid LANGUAGE sql STABLE AS
        $$ SELECT nullif(auth.jwt() ->> 'sub', '')::uuid $$""",
        """
        CREATE OR REPLACE FUNCTION auth.role() RETURNS text LANGUAGE sql STABLE AS
        $$ SELECT nullif(auth.jwt() ->> 'role', '')::text $$""",
        "GRANT USAGE ON SCHEMA auth TO aura_anon, aura_authenticated",
        "GRANT EXECUTE ON FUNCTION auth.jwt(), auth.uid(), auth.role() TO aura_anon, aura_authenticated",
        // The per-key RLS check (tenant.TenantDb): one query per key, each in its own
        // subtransaction, so a policy that raises for one row denies that row only. SECURITY
        // INVOKER: it runs with the client role's rights, nothing more (tenant code may call it,
        // gaining nothing). Its search_path is the caller's (pg_catalog first).
        "CREATE SCHEMA IF NOT EXISTS aura_rls",
        """
        CREATE OR REPLACE FUNCTION aura_rls.visible_each(query text, keys text[], width integer)
        RETURNS TABLE(k integer, visible boolean, err_state text) LANGUAGE plpgsql VOLATILE AS $$
        DECLARE
          seen boolean;
        BEGIN
          FOR i IN 1 .. coalesce(array_length(keys, 1), 0) / width LOOP
            k := i;
            err_state := NULL;
            BEGIN
              EXECUTE query INTO seen USING keys[(i - 1) * width + 1 : i * width];
              visible := coalesce(seen, false);
            EXCEPTION WHEN OTHERS THEN
              visible := false;
              err_state := SQLSTATE;
            END;
            RETURN NEXT;
          END LOOP;
        END $$""",
        "REVOKE ALL ON FUNCTION aura_rls.visible_each(text, text[], integer) FROM PUBLIC",
        "GRANT USAGE ON SCHEMA aura_rls TO aura_anon, aura_authenticated",
        "GRANT EXECUTE ON FUNCTION aura_rls.visible_each(text, text[], integer) TO aura_anon, aura_authenticated",
        // Private channels (docs/design.md H1): the project's setting, and how far its realtime
        // schema (RealtimeSchemas) is provisioned.
        "ALTER TABLE aura_platform.projects ADD COLUMN IF NOT EXISTS private_only boolean NOT NULL DEFAULT false",
        "ALTER TABLE aura_platform.projects ADD COLUMN IF NOT EXISTS realtime_schema_version integer NOT NULL DEFAULT 0",
        // issue 23: what a join costs in subscription checks, and each project's share of the KV buckets
        "ALTER TABLE aura_platform.project_limits ADD COLUMN IF NOT EXISTS max_checks_per_second integer"
                + " CHECK (max_checks_per_second > 0)",
        "ALTER TABLE aura_platform.project_limits ADD COLUMN IF NOT EXISTS max_registry_bytes bigint"
                + " CHECK (max_registry_bytes > 0)",
        "ALTER TABLE aura_platform.project_limits ADD COLUMN IF NOT EXISTS max_presence_bytes bigint"
                + " CHECK (max_presence_bytes > 0)",
        // issue 27: resume of postgres_changes across reconnects (docs/design.md R): the window
        // (0 = off) and the bound of the project's history stream in bytes
        "ALTER TABLE aura_platform.project_limits ADD COLUMN IF NOT EXISTS postgres_changes_resume_seconds integer"
                + " NOT NULL DEFAULT 0 CHECK (postgres_changes_resume_seconds >= 0"
                + " AND postgres_changes_resume_seconds <= 86400)",
        "ALTER TABLE aura_platform.project_limits ADD COLUMN IF NOT EXISTS postgres_changes_history_bytes bigint"
                + " NOT NULL DEFAULT 67108864 CHECK (postgres_changes_history_bytes > 0)",
        // issue 38: NULL = the operator's AURA_RESUME_DEFAULT_SECONDS (shipped as 0), 0 = off.
        // Once (while the column is still NOT NULL): the 0s that meant "the default" become NULL.
        """
        DO $$ BEGIN
          IF EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = 'aura_platform'
                     AND table_name = 'project_limits' AND column_name = 'postgres_changes_resume_seconds'
                     AND is_nullable = 'NO') THEN
            ALTER TABLE aura_platform.project_limits ALTER COLUMN postgres_changes_resume_seconds DROP NOT NULL,
              ALTER COLUMN postgres_changes_resume_seconds DROP DEFAULT;
            UPDATE aura_platform.project_limits SET postgres_changes_resume_seconds = NULL
              WHERE postgres_changes_resume_seconds = 0;
          END IF;
        END $$""",
        // issue 38: each project's share of the aura_resume bucket (NULL: ws-front's default)
        "ALTER TABLE aura_platform.project_limits ADD COLUMN IF NOT EXISTS max_resume_bytes bigint"
                + " CHECK (max_resume_bytes > 0)",
        // The read check of a private channel, as Supabase makes it: probe rows for the topic are
        // inserted (by the project's SECURITY DEFINER probe, so no insert policy is needed), then
        // selected in a new statement under the caller's client role and claims, so the tenant's
        // SELECT policies on its messages table decide. The caller's transaction is always rolled
        // back, so the probes are never committed (nor captured by the slot). SECURITY INVOKER.
        """
        CREATE OR REPLACE FUNCTION aura_rls.channel_read(realtime_schema text, probe_topic text)
        RETURNS TABLE(read_broadcast boolean, read_presence boolean) LANGUAGE plpgsql VOLATILE AS $$
        DECLARE
          ids uuid[];
        BEGIN
          EXECUTE format('SELECT array_agg(p) FROM %I.aura_probe($1) p', realtime_schema) INTO ids USING probe_topic;
          EXECUTE format('SELECT coalesce(bool_or(extension = ''broadcast''), false),'
                         ' coalesce(bool_or(extension = ''presence''), false)'
                         ' FROM %I.messages WHERE id = ANY($1)', realtime_schema)
            INTO read_broadcast, read_presence USING ids;
          RETURN NEXT;
        END $$""",
        "REVOKE ALL ON FUNCTION aura_rls.channel_read(text, text) FROM PUBLIC",
        "GRANT EXECUTE ON FUNCTION aura_rls.channel_read(text, text) TO aura_anon, aura_authenticated",
        // issue 40: each project's own keys (docs/security.md, ProjectKeysTable). API keys are stored
        // as their SHA-256 only; an issuer belongs to one project (its unique constraint).
        """
        CREATE TABLE IF NOT EXISTS aura_platform.api_keys(
          id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
          project_id uuid NOT NULL REFERENCES aura_platform.projects ON DELETE CASCADE,
          type text NOT NULL CHECK (type IN ('publishable', 'secret')),
          name text NOT NULL DEFAULT '' CHECK (length(name) <= 200),
          prefix text NOT NULL CHECK (length(prefix) <= 40),
          key_hash bytea NOT NULL UNIQUE CHECK (length(key_hash) = 32),
          inserted_at timestamptz NOT NULL DEFAULT now(),
          revoked_at timestamptz)""",
        "CREATE INDEX IF NOT EXISTS api_keys_project_id ON aura_platform.api_keys(project_id)",
        """
        CREATE TABLE IF NOT EXISTS aura_platform.token_issuers(
          id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
          project_id uuid NOT NULL REFERENCES aura_platform.projects ON DELETE CASCADE,
          issuer text NOT NULL UNIQUE CHECK (length(issuer) BETWEEN 1 AND 2048),
          audience text CHECK (length(audience) BETWEEN 1 AND 2048),
          jwks_url text CHECK (jwks_url ~ '^https?://' AND length(jwks_url) <= 2048),
          jwks jsonb CHECK (jsonb_typeof(jwks -> 'keys') = 'array'),
          inserted_at timestamptz NOT NULL DEFAULT now(),
          updated_at timestamptz NOT NULL DEFAULT now(),
          CHECK (jwks_url IS NOT NULL OR jwks IS NOT NULL))""",
        "CREATE INDEX IF NOT EXISTS token_issuers_project_id ON aura_platform.token_issuers(project_id)",
    };

    private PlatformSchema() {}

    /**
     * Runs the bootstrap in one transaction.
     *
     * @throws SQLException when the role lacks the privileges (CREATE on the database, CREATEROLE)
     */
    public static void ensure(PlatformDb db) throws SQLException {
        boolean guarded;
        try (Connection c = db.connection()) {
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                s.execute("SELECT pg_advisory_xact_lock(" + LOCK_KEY + ")");
                for (String sql : DDL) {
                    s.execute(sql);
                }
                guarded = Confinement.install(c);
                c.commit();
            } catch (SQLException e) {
                c.rollback();
                throw e;
            }
        }
        log.info(
                "platform schema aura_platform, roles aura_anon/aura_authenticated, auth.* and aura_rls.* functions are in"
                        + " place; {}",
                guarded
                        ? "the confinement guard is installed"
                        : "the confinement guard is not installed (the POSTGRES_URL login is not superuser)");
    }
}
