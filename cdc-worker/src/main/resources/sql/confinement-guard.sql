-- aura-realtime: the confinement guard (docs/security.md, "The confinement cannot be edited").
--
-- Two event triggers that refuse every DDL command on an object that confines the projects, by
-- anyone but the platform (a superuser, or the owner of schema aura_platform: the cdc-worker's
-- POSTGRES_URL login). The confining objects: each project's runners aura_rls."project_<id>_anon"
-- and aura_rls."project_<id>_authenticated" (owned by the project's roles, the only ones a project
-- could edit), and the schemas aura_rls, aura_platform and auth with everything in them. Refused:
-- ALTER (SECURITY INVOKER, OWNER, SET, RESET, SET SCHEMA, RENAME, ...), CREATE OR REPLACE, COMMENT,
-- DROP (also by DROP OWNED or a cascade), and GRANT or REVOKE by a role holding the privileges of
-- a runner's role or of a confining schema's owner. Postgres runs event triggers for DDL inside SECURITY DEFINER
-- functions and in deferred triggers at COMMIT alike, and only a superuser can disable them.
--
-- Creating an event trigger needs a superuser. The cdc-worker runs this file itself at start when
-- its POSTGRES_URL login is one. Otherwise run it once as a superuser, in the database of
-- aura_platform, after the worker's first start:
--
--   psql --single-transaction -f confinement-guard.sql "postgresql://<superuser>@<host>/<database>"
--
-- Idempotent. The worker accepts the guard only as its own build writes it (it compares the
-- function's body), so run the file of the version you deploy again after an upgrade.

CREATE OR REPLACE FUNCTION aura_platform.confinement_guard() RETURNS event_trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $guard$
DECLARE
  confining CONSTANT pg_catalog.name[] := ARRAY['aura_platform', 'aura_rls', 'auth'];
  runner_role CONSTANT text := '^project_[0-9a-f]{8}(_[0-9a-f]{4}){3}_[0-9a-f]{12}_(anon|authenticated)$';
  me pg_catalog.oid := (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER);
  cmd record;
BEGIN
  IF EXISTS (SELECT FROM pg_catalog.pg_roles r WHERE r.oid OPERATOR(pg_catalog.=) me AND r.rolsuper)
     OR EXISTS (SELECT FROM pg_catalog.pg_namespace n
                 WHERE n.nspname OPERATOR(pg_catalog.=) 'aura_platform' AND n.nspowner OPERATOR(pg_catalog.=) me) THEN
    RETURN;
  END IF;
  IF TG_EVENT OPERATOR(pg_catalog.=) 'sql_drop' THEN
    FOR cmd IN SELECT * FROM pg_catalog.pg_event_trigger_dropped_objects() LOOP
      IF cmd.schema_name OPERATOR(pg_catalog.=) ANY (confining)
         OR (cmd.object_type OPERATOR(pg_catalog.=) 'schema' AND cmd.object_name OPERATOR(pg_catalog.=) ANY (confining)) THEN
        RAISE EXCEPTION 'ConfinementGuard: % may not drop %', CURRENT_USER, cmd.object_identity
          USING ERRCODE = '42501', HINT = 'The objects that confine projects change through the platform only.';
      END IF;
    END LOOP;
    RETURN;
  END IF;
  FOR cmd IN SELECT * FROM pg_catalog.pg_event_trigger_ddl_commands() LOOP
    IF cmd.command_tag OPERATOR(pg_catalog.=) ANY (ARRAY['GRANT', 'REVOKE']) THEN
      -- a GRANT or REVOKE names no object here: refused to a role holding the privileges of a
      -- project's runner role or of a confining schema's owner (the only owners of confining
      -- objects), found through its own memberships
      IF EXISTS (WITH RECURSIVE mine(r, name, inherits) AS (
                   SELECT o.oid, o.rolname, o.rolinherit FROM pg_catalog.pg_roles o WHERE o.oid OPERATOR(pg_catalog.=) me
                   UNION
                   SELECT g.oid, g.rolname, g.rolinherit FROM mine
                     JOIN pg_catalog.pg_auth_members m ON m.member OPERATOR(pg_catalog.=) mine.r
                     JOIN pg_catalog.pg_roles g ON g.oid OPERATOR(pg_catalog.=) m.roleid
                    WHERE mine.inherits)
                 SELECT FROM mine
                  WHERE mine.name::text OPERATOR(pg_catalog.~) runner_role
                     OR mine.r OPERATOR(pg_catalog.=) ANY (SELECT n.nspowner FROM pg_catalog.pg_namespace n
                                                           WHERE n.nspname OPERATOR(pg_catalog.=) ANY (confining))) THEN
        RAISE EXCEPTION 'ConfinementGuard: % acts as the owner of an object that confines a project and may not %',
          CURRENT_USER, cmd.command_tag
          USING ERRCODE = '42501', HINT = 'The objects that confine projects change through the platform only.';
      END IF;
    ELSIF cmd.schema_name OPERATOR(pg_catalog.=) ANY (confining)
       OR (cmd.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_namespace'::pg_catalog.regclass
           AND EXISTS (SELECT FROM pg_catalog.pg_namespace n
                        WHERE n.oid OPERATOR(pg_catalog.=) cmd.objid AND n.nspname OPERATOR(pg_catalog.=) ANY (confining)))
       OR (cmd.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
           AND EXISTS (SELECT FROM pg_catalog.pg_proc p
                         JOIN pg_catalog.pg_roles o ON o.oid OPERATOR(pg_catalog.=) p.proowner
                        WHERE p.oid OPERATOR(pg_catalog.=) cmd.objid
                          AND o.rolname::text OPERATOR(pg_catalog.~) runner_role)) THEN
      RAISE EXCEPTION 'ConfinementGuard: % may not % %', CURRENT_USER, cmd.command_tag, cmd.object_identity
        USING ERRCODE = '42501', HINT = 'The objects that confine projects change through the platform only.';
    END IF;
  END LOOP;
END
$guard$;

REVOKE ALL ON FUNCTION aura_platform.confinement_guard() FROM PUBLIC;

DROP EVENT TRIGGER IF EXISTS aura_confinement_ddl;
DROP EVENT TRIGGER IF EXISTS aura_confinement_drop;
CREATE EVENT TRIGGER aura_confinement_ddl ON ddl_command_end EXECUTE FUNCTION aura_platform.confinement_guard();
CREATE EVENT TRIGGER aura_confinement_drop ON sql_drop EXECUTE FUNCTION aura_platform.confinement_guard();
ALTER EVENT TRIGGER aura_confinement_ddl ENABLE ALWAYS;
ALTER EVENT TRIGGER aura_confinement_drop ENABLE ALWAYS;
