#!/usr/bin/env bash
# Regenerates v1-cluster.sql: a cluster as provisioned by the v1 build (realtime schema version 1,
# shared client roles aura_anon/aura_authenticated, one shared tenant login), for
# MigrationFromV1E2EIT. See README.md next to this file.
#
# Usage (from anywhere, after `mvn -B -q -DskipTests install` of the build to snapshot):
#   bash e2e/src/test/resources/migration/make-v1-fixture.sh [OUT]   (default: v1-cluster.sql here)
#
# What it does: a throw-away Postgres 15 + wal2json (initdb as OS user postgres, settings from
# docker/postgres-wal2json/install-wal2json.sh configure, as the testkit's PostgresServer does), a
# throw-away nats-server with JetStream, and the cdc-worker jar of this checkout with the testkit's
# environment (ServiceEnv.cdcWorker). Two projects are registered as E2eStack.createProject does;
# each gets an enabled table (control API), a row-level-security policy on it, private channel
# policies on its realtime messages table and one persisted private broadcast (realtime.send from
# SQL). The worker is stopped, then roles and the product's schemas are dumped. Everything it
# starts is stopped and deleted on exit.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../../../.." && pwd)"
OUT="${1:-$HERE/v1-cluster.sql}"
PG_BIN="${PG_BIN:-/usr/lib/postgresql/15/bin}"
JAVA="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
CDC_JAR="$ROOT/cdc-worker/target/cdc-worker.jar"
WAL2JSON_SCRIPT="$ROOT/docker/postgres-wal2json/install-wal2json.sh"

# Must match MigrationFromV1E2EIT: E2eStack.SECRET (the tenant login's password is derived from it),
# the slot (the tenant login is <slot>_tenant) and the project ids.
SECRET="e2e-secret-e2e-secret-e2e-secret-0042"
SLOT="aura_v1fixture"
PROJECT_A="11111111-1111-4111-8111-111111111111"
PROJECT_B="22222222-2222-4222-8222-222222222222"

log() { printf 'make-v1-fixture: %s\n' "$*" >&2; }
die() { printf 'make-v1-fixture: error: %s\n' "$*" >&2; exit 1; }

[ -x "$PG_BIN/postgres" ] || die "no Postgres 15 in $PG_BIN; run: scripts/stack.sh install"
command -v nats-server >/dev/null || [ -x /usr/sbin/nats-server ] || die "nats-server missing; run: scripts/stack.sh install"
NATS_BIN="$(command -v nats-server || echo /usr/sbin/nats-server)"
[ -f "$CDC_JAR" ] || die "$CDC_JAR missing; run: mvn -B -q -DskipTests install"
[ -x "$JAVA" ] || die "no java at $JAVA; set JAVA_HOME"

as_postgres() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

WORK="$(mktemp -d /tmp/aura-v1fixture-XXXXXX)"
chmod 700 "$WORK"
[ "$(id -u)" -ne 0 ] || chown postgres "$WORK"
PG_PORT="$(free_port)"
NATS_PORT="$(free_port)"
CDC_PORT="$(free_port)"
CDC_PID=""
NATS_PID=""

cleanup() {
  set +e
  [ -n "$CDC_PID" ] && kill "$CDC_PID" 2>/dev/null && wait "$CDC_PID" 2>/dev/null
  [ -n "$NATS_PID" ] && kill "$NATS_PID" 2>/dev/null && wait "$NATS_PID" 2>/dev/null
  [ -f "$WORK/data/postmaster.pid" ] && as_postgres "$PG_BIN/pg_ctl" -D "$WORK/data" -m fast -w stop >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT

psql_() { "$PG_BIN/psql" -X -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 "$@"; }
query() { psql_ -tA -c "$1"; }

# Waits up to $2 s for command "$1" (a shell snippet) to succeed.
await() {
  local what="$1" secs="$2" i
  for ((i = 0; i < secs * 5; i++)); do
    if eval "$what"; then return 0; fi
    sleep 0.2
  done
  return 1
}

log "Postgres on 127.0.0.1:$PG_PORT ($WORK)"
as_postgres "$PG_BIN/initdb" -D "$WORK/data" -U postgres -A trust -E UTF8 --locale=C --no-sync >"$WORK/initdb.log" 2>&1 \
  || { cat "$WORK/initdb.log" >&2; die "initdb failed"; }
cat >>"$WORK/data/postgresql.conf" <<EOF

# make-v1-fixture (as the testkit's PostgresInit)
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$WORK'
fsync = off
full_page_writes = off
max_connections = 200
logging_collector = off
EOF
bash "$WAL2JSON_SCRIPT" configure "$WORK/data/postgresql.conf" "$PG_BIN/postgres" >/dev/null
as_postgres "$PG_BIN/pg_ctl" -D "$WORK/data" -l "$WORK/pg.log" -w start >/dev/null \
  || { tail -30 "$WORK/pg.log" >&2; die "Postgres did not start"; }

log "nats-server on 127.0.0.1:$NATS_PORT"
"$NATS_BIN" -a 127.0.0.1 -p "$NATS_PORT" -js -sd "$WORK/nats" >"$WORK/nats.log" 2>&1 &
NATS_PID=$!

log "cdc-worker $(git -C "$ROOT" rev-parse --short HEAD) on :$CDC_PORT"
env -i PATH="$PATH" HOME="${HOME:-/root}" LANG=C.UTF-8 \
  POSTGRES_REPLICATION_URL="jdbc:postgresql://127.0.0.1:$PG_PORT/postgres?user=postgres" \
  NATS_URL="nats://127.0.0.1:$NATS_PORT" \
  AURA_JWT_SECRET="$SECRET" \
  CDC_HTTP_PORT="$CDC_PORT" \
  CDC_SLOT_NAME="$SLOT" \
  CDC_TABLE_REFRESH_MS=300 \
  CDC_IDLE_BACKOFF_MS=20 \
  LEADER_ELECTION=disabled \
  "$JAVA" -jar "$CDC_JAR" >"$WORK/cdc.log" 2>&1 </dev/null &
CDC_PID=$!
await 'curl -fsS "http://127.0.0.1:$CDC_PORT/health" 2>/dev/null | grep -q "\"cdc_active\":true"' 60 \
  || { tail -40 "$WORK/cdc.log" >&2; die "cdc-worker did not become active"; }

mint() { node "$ROOT/scripts/mint-jwt.mjs" --secret "$SECRET" --role service_role --ref "$1" --iss aura-test; }

# $1 project id, $2 table, $3 topic prefix, $4 org claim of readers
provision() {
  local id="$1" table="$2" prefix="$3" org="$4"
  local schema="project_${id//-/_}"
  local rt="${schema}_realtime"
  log "project $id (schema $schema, table $table)"
  # E2eStack.createProject
  psql_ <<SQL
CREATE SCHEMA IF NOT EXISTS "$schema";
GRANT USAGE ON SCHEMA "$schema" TO aura_anon, aura_authenticated;
INSERT INTO aura_platform.projects(project_id, schema_name) VALUES ('$id', '$schema') ON CONFLICT DO NOTHING;
-- E2eStack.createEnabledTable, then a policy as in SessionSurfaceE2EIT
CREATE TABLE "$schema"."$table"(id bigserial PRIMARY KEY, owner_id uuid NOT NULL, body text);
GRANT SELECT ON "$schema"."$table" TO aura_anon, aura_authenticated;
ALTER TABLE "$schema"."$table" ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON "$schema"."$table" FOR SELECT USING (owner_id = auth.uid());
INSERT INTO "$schema"."$table"(owner_id, body) VALUES ('00000000-0000-4000-8000-000000000001', 'before-upgrade');
SQL
  local code
  code="$(curl -sS -o "$WORK/enable.out" -w '%{http_code}' -X PUT \
    -H 'Content-Type: application/json' -H "apikey: $(mint "$id")" \
    --data '{"enabled": true}' \
    "http://127.0.0.1:$CDC_PORT/v1/db/$id/schema/tables/$table/realtime")"
  [ "${code:0:1}" = 2 ] || { cat "$WORK/enable.out" >&2; die "control API enable of $table answered $code"; }
  await "[ \"\$(query \"SELECT realtime_schema_version FROM aura_platform.projects WHERE project_id = '$id'\")\" = 1 ]" 30 \
    || { tail -40 "$WORK/cdc.log" >&2; die "realtime schema of $id not provisioned"; }
  # private channels as in PrivateChannelsE2EIT, and one persisted private broadcast
  psql_ <<SQL
CREATE POLICY org_reads ON "$rt".messages FOR SELECT TO aura_authenticated
  USING ("$rt".topic() LIKE '$prefix:%' AND auth.jwt() ->> 'org' = '$org');
CREATE POLICY org_writers ON "$rt".messages FOR INSERT TO aura_authenticated
  WITH CHECK ("$rt".topic() LIKE '$prefix:%' AND auth.jwt() ->> 'org' = '$org' AND auth.jwt() ->> 'writer' = 'yes');
SELECT "$rt".send('{"n": 1}', 'before-upgrade', '$prefix:log', true);
SQL
}

provision "$PROJECT_A" notes org-acme acme
provision "$PROJECT_B" orders org-beta beta

[ "$(query "SELECT count(*) FROM aura_platform.realtime_tables WHERE enabled")" = 2 ] || die "tables not enabled"
log "stopping the cdc-worker"
kill "$CDC_PID"
wait "$CDC_PID" || true
CDC_PID=""

VERSION="$(git -C "$ROOT" rev-parse HEAD)"
DIRTY="$(git -C "$ROOT" status --porcelain -- cdc-worker common pom.xml | head -1)"
log "dumping into $OUT"
{
  cat <<EOF
-- aura-realtime: a cluster provisioned by the v1 build (RealtimeSchemas.VERSION = 1), for
-- MigrationFromV1E2EIT. Generated by e2e/src/test/resources/migration/make-v1-fixture.sh
-- from commit $VERSION${DIRTY:+ (with uncommitted changes)} with $("$PG_BIN/postgres" --version).
-- Do not edit by hand: regenerate (see README.md). Load with psql into a fresh cluster:
--   psql -X -v ON_ERROR_STOP=1 -h 127.0.0.1 -p PORT -U postgres -d postgres -f v1-cluster.sql
-- Projects: $PROJECT_A (table notes, topics org-acme:*),
--           $PROJECT_B (table orders, topics org-beta:*).
-- Tenant login ${SLOT}_tenant (slot $SLOT, password derived from E2eStack.SECRET).

-- ---- roles (pg_dumpall --roles-only, superuser postgres left out; CREATE ROLE made idempotent)
EOF
  # The target cluster has its own superuser postgres; every other role is created only if missing.
  "$PG_BIN/pg_dumpall" -h 127.0.0.1 -p "$PG_PORT" -U postgres --roles-only \
    | grep -v -E '^(CREATE|ALTER) ROLE postgres( |;)' \
    | sed -E 's/^CREATE ROLE ([^;]+);$/DO $$ BEGIN CREATE ROLE \1; EXCEPTION WHEN duplicate_object THEN NULL; END $$;/'
  echo
  echo "-- ---- database postgres: the product's schemas (pg_dump -n aura_platform -n aura_rls -n auth -n 'project_*')"
  "$PG_BIN/pg_dump" -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres \
    -n aura_platform -n aura_rls -n auth -n 'project_*'
} >"$OUT.tmp"
grep -q "CREATE SCHEMA \"project_${PROJECT_B//-/_}_realtime\"\|CREATE SCHEMA project_${PROJECT_B//-/_}_realtime" "$OUT.tmp" \
  || die "the dump lacks project B's realtime schema"
mv "$OUT.tmp" "$OUT"
log "wrote $OUT ($(wc -l <"$OUT") lines)"
