package dev.aura.realtime.cdc.provision;

import java.util.List;

/**
 * The DDL of one project's realtime schema ({@link RealtimeSchemas} describes each object); the
 * grants on it are the project identity's ({@link ProjectIdentities}).
 */
final class RealtimeSchemaDdl {
    private RealtimeSchemaDdl() {}

    /** The statements creating one project's realtime schema; {@code owner} is a quoted role name (regrole text). */
    static List<String> statements(String rt, String projectSchemaLiteral, String owner) {
        return List.of(
                "CREATE SCHEMA IF NOT EXISTS " + rt,
                "CREATE TABLE IF NOT EXISTS " + rt + """
                        .messages(
                          topic text NOT NULL,
                          extension text NOT NULL,
                          payload jsonb,
                          event text,
                          private boolean DEFAULT false,
                          updated_at timestamptz NOT NULL DEFAULT now(),
                          inserted_at timestamptz NOT NULL DEFAULT now(),
                          id uuid NOT NULL DEFAULT gen_random_uuid() PRIMARY KEY,
                          seq bigint GENERATED ALWAYS AS IDENTITY)""",
                // version 3: binary broadcasts (send_binary, REST octet-stream with persist), as
                // Supabase's binary_payload; a row carries payload or binary_payload, never both
                "ALTER TABLE " + rt + ".messages ADD COLUMN IF NOT EXISTS binary_payload bytea",
                "DO $$ BEGIN\n"
                        + "  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_constraint WHERE conrelid = '" + rt
                        + ".messages'::regclass AND conname = 'messages_payload_exclusive') THEN\n"
                        + "    ALTER TABLE " + rt + ".messages ADD CONSTRAINT messages_payload_exclusive"
                        + " CHECK (payload IS NULL OR binary_payload IS NULL) NOT VALID;\n"
                        + "  END IF;\n"
                        + "END $$",
                // version 4: persist {ttl}; replay leaves out and the janitor deletes a row past it
                "ALTER TABLE " + rt + ".messages ADD COLUMN IF NOT EXISTS expires_at timestamptz",
                "CREATE INDEX IF NOT EXISTS messages_expires_at ON " + rt
                        + ".messages (expires_at) WHERE expires_at IS NOT NULL",
                "CREATE INDEX IF NOT EXISTS messages_topic_seq ON " + rt + ".messages (topic, seq)",
                "CREATE INDEX IF NOT EXISTS messages_inserted_at ON " + rt + ".messages (inserted_at)",
                "ALTER TABLE " + rt + ".messages ENABLE ROW LEVEL SECURITY",
                "CREATE OR REPLACE FUNCTION " + rt + """
                        .topic() RETURNS text LANGUAGE sql STABLE AS
                        $$ SELECT nullif(current_setting('realtime.topic', true), '') $$""",
                "CREATE OR REPLACE FUNCTION " + rt
                        + ".send(payload jsonb, event text, topic text, private boolean DEFAULT true)"
                        + " RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog AS $$\n"
                        + "BEGIN\n"
                        + "  INSERT INTO " + rt + ".messages(payload, event, topic, private, extension)\n"
                        + "  VALUES (send.payload, send.event, send.topic, send.private, 'broadcast');\n"
                        + "EXCEPTION WHEN OTHERS THEN\n"
                        + "  RAISE WARNING 'ErrorSendingBroadcastMessage: %', SQLERRM;\n"
                        + "END $$",
                "CREATE OR REPLACE FUNCTION " + rt
                        + ".send_binary(payload bytea, event text, topic text, private boolean DEFAULT true)"
                        + " RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog AS $$\n"
                        + "BEGIN\n"
                        + "  INSERT INTO " + rt + ".messages(binary_payload, event, topic, private, extension)\n"
                        + "  VALUES (send_binary.payload, send_binary.event, send_binary.topic,"
                        + " send_binary.private, 'broadcast');\n"
                        + "EXCEPTION WHEN OTHERS THEN\n"
                        + "  RAISE WARNING 'ErrorSendingBroadcastMessage: %', SQLERRM;\n"
                        + "END $$",
                "CREATE OR REPLACE FUNCTION " + rt
                        + ".broadcast_changes(topic_name text, event_name text, operation text, table_name text,"
                        + " table_schema text, new record, old record, level text DEFAULT 'ROW')"
                        + " RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog AS $$\n"
                        + "BEGIN\n"
                        + "  IF level IS DISTINCT FROM 'ROW' THEN\n"
                        + "    RAISE EXCEPTION 'broadcast_changes needs a FOR EACH ROW trigger, not level %', level;\n"
                        + "  END IF;\n"
                        + "  IF operation IS NULL OR operation NOT IN ('INSERT', 'UPDATE', 'DELETE') THEN\n"
                        + "    RAISE EXCEPTION 'broadcast_changes: unexpected operation %', operation;\n"
                        + "  END IF;\n"
                        + "  PERFORM " + rt + ".send(jsonb_build_object(\n"
                        + "      'old_record', CASE WHEN operation = 'INSERT' THEN NULL ELSE to_jsonb(old) END,\n"
                        + "      'record', CASE WHEN operation = 'DELETE' THEN NULL ELSE to_jsonb(new) END,\n"
                        + "      'operation', operation, 'table', table_name,\n"
                        + "      'schema', CASE WHEN table_schema = " + projectSchemaLiteral
                        + " THEN 'public' ELSE table_schema END),\n"
                        + "    event_name, topic_name, true);\n"
                        + "END $$",
                "CREATE OR REPLACE FUNCTION " + rt
                        + ".aura_probe(probe_topic text) RETURNS SETOF uuid LANGUAGE sql VOLATILE SECURITY DEFINER"
                        + " SET search_path = pg_catalog AS $$\n"
                        + "  INSERT INTO " + rt + ".messages(topic, extension, private, event)\n"
                        + "  VALUES (probe_topic, 'broadcast', true, '" + RealtimeSchemas.PROBE_EVENT + "'),"
                        + " (probe_topic, 'presence', true, '" + RealtimeSchemas.PROBE_EVENT + "')\n"
                        + "  RETURNING id $$",
                "CREATE OR REPLACE FUNCTION " + rt
                        + ".aura_probe_guard() RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog AS $$\n"
                        + "BEGIN\n"
                        + "  RAISE EXCEPTION 'messages with event " + RealtimeSchemas.PROBE_EVENT
                        + " are never committed'"
                        + " USING ERRCODE = '42501';\n"
                        + "END $$",
                "DROP TRIGGER IF EXISTS aura_probe_guard ON " + rt + ".messages",
                "CREATE CONSTRAINT TRIGGER aura_probe_guard AFTER INSERT OR UPDATE ON " + rt
                        + ".messages DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.event = '"
                        + RealtimeSchemas.PROBE_EVENT
                        + "') EXECUTE FUNCTION " + rt + ".aura_probe_guard()",
                "CREATE OR REPLACE FUNCTION " + rt
                        + ".aura_janitor(max_rows integer) RETURNS integer LANGUAGE plpgsql VOLATILE SECURITY DEFINER"
                        + " SET search_path = pg_catalog AS $$\n"
                        + "DECLARE n integer;\n"
                        + "BEGIN\n"
                        + "  DELETE FROM " + rt + ".messages WHERE id IN (SELECT id FROM " + rt + ".messages"
                        + " WHERE inserted_at < now() - aura_rls.messages_retention() OR expires_at <= now()"
                        + " ORDER BY inserted_at"
                        + " LIMIT least(greatest(max_rows, 1), " + RealtimeSchemas.JANITOR_MAX_BATCH + "));\n"
                        + "  GET DIAGNOSTICS n = ROW_COUNT;\n"
                        + "  RETURN n;\n"
                        + "END $$",
                "REVOKE ALL ON FUNCTION " + rt + ".aura_probe(text), " + rt + ".aura_janitor(integer) FROM PUBLIC",
                "ALTER SCHEMA " + rt + " OWNER TO " + owner,
                "ALTER TABLE " + rt + ".messages OWNER TO " + owner,
                "ALTER FUNCTION " + rt + ".topic() OWNER TO " + owner,
                "ALTER FUNCTION " + rt + ".send(jsonb, text, text, boolean) OWNER TO " + owner,
                "ALTER FUNCTION " + rt + ".send_binary(bytea, text, text, boolean) OWNER TO " + owner,
                "ALTER FUNCTION " + rt
                        + ".broadcast_changes(text, text, text, text, text, record, record, text) OWNER TO " + owner,
                "ALTER FUNCTION " + rt + ".aura_probe(text) OWNER TO " + owner,
                "ALTER FUNCTION " + rt + ".aura_probe_guard() OWNER TO " + owner,
                "ALTER FUNCTION " + rt + ".aura_janitor(integer) OWNER TO " + owner);
    }
}
