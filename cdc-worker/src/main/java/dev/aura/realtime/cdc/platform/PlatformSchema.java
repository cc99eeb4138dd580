package dev.aura.realtime.cdc.platform;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates or upgrades, idempotently and under an advisory lock (several workers start at
 * once), what the product needs in the database: schema {@code aura_platform} with
 * {@code projects} and {@code realtime_tables}, the NOLOGIN roles {@code aura_anon} and
 * {@code aura_authenticated}, and Supabase's {@code auth.jwt()}, {@code auth.uid()},
 * {@code auth.role()} reading the {@code request.jwt.claims} setting, so policies written for
 * Supabase ({@code using (owner_id = auth.uid())}) work unchanged.
 */
public final class PlatformSchema {
    private static final Logger log = LoggerFactory.getLogger(PlatformSchema.class);
    /** Arbitrary constant: pg_advisory_xact_lock key of the bootstrap. */
    private static final long LOCK_KEY = 0x4155524152544CL;

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
    };

    private PlatformSchema() {}

    /**
     * Runs the bootstrap in one transaction.
     *
     * @throws SQLException when the role lacks the privileges (CREATE on the database, CREATEROLE)
     */
    public static void ensure(PlatformDb db) throws SQLException {
        try (Connection c = db.connection()) {
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                s.execute("SELECT pg_advisory_xact_lock(" + LOCK_KEY + ")");
                for (String sql : DDL) {
                    s.execute(sql);
                }
                c.commit();
            } catch (SQLException e) {
                c.rollback();
                throw e;
            }
            grantRolesToSelf(c);
        }
        log.info("platform schema aura_platform, roles aura_anon/aura_authenticated and auth.* functions are in place");
    }

    /** RLS checks run {@code SET LOCAL ROLE aura_anon}: the session user must be a member (superusers are). */
    private static void grantRolesToSelf(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            var rs = s.executeQuery("SELECT rolsuper FROM pg_roles WHERE rolname = current_user");
            if (rs.next() && rs.getBoolean(1)) {
                return;
            }
            s.execute("GRANT aura_anon, aura_authenticated TO CURRENT_USER");
            c.commit();
        } catch (SQLException e) {
            c.rollback();
            log.warn(
                    "[RoleGrantFailed] could not grant aura_anon/aura_authenticated to the POSTGRES_URL role ({}); RLS checks need that membership",
                    e.getMessage());
        }
    }
}
