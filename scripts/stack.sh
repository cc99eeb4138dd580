#!/usr/bin/env bash
# Local aura-realtime stack: Postgres (wal2json) + nats-server + cdc-worker + ws-front.
#
# Usage: scripts/stack.sh install              install what is missing (apt, JDK check, npm ci in e2e/js)
#        scripts/stack.sh up [--services-only] start everything (or only Postgres and NATS) and seed a demo
#        scripts/stack.sh down [--purge]       stop everything (keep data; --purge deletes .stack/)
#        scripts/stack.sh status               show what runs
#        scripts/stack.sh enable <table>       enable realtime on a table of the demo project and grant
#                                              SELECT on it to anon and authenticated (Supabase's defaults)
#
# State lives in .stack/ (gitignored; STACK_DIR overrides): pg/ (cluster), nats/ (JetStream store,
# nats.conf, generated passwords in auth.env), logs/, *.pid, ports.env (the ports of the last 'up',
# used by later commands that are given none). NATS runs with authentication and the chart's subject
# permissions (deploy/k8s/files/nats-permissions.conf): users aura-cdc-worker, aura-ws-front and,
# for your own tools, aura-dev (may do anything; its URL is printed by `up`).
# Fixed ports (override with env STACK_PG_PORT, STACK_NATS_PORT, STACK_NATS_MONITOR_PORT,
# CDC_HTTP_PORT, WS_PORT): Postgres 54322, NATS 14222 (monitoring 18222), cdc-worker HTTP 8081,
# ws-front 4000. All commands are idempotent. An 'up' that fails stops what it started.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STACK="${STACK_DIR:-$ROOT/.stack}"
LOGS="$STACK/logs"
PG_MAJOR="${PG_MAJOR:-15}"
PG_BIN="/usr/lib/postgresql/$PG_MAJOR/bin"
PG_DATA="$STACK/pg/data"
# The ports of the last 'up' (written by save_ports); a port given in the environment wins.
PORTS_FILE="$STACK/ports.env"
SAVED_PG_PORT="" SAVED_NATS_PORT="" SAVED_NATS_MONITOR_PORT="" SAVED_CDC_HTTP_PORT="" SAVED_WS_PORT=""
if [ -f "$PORTS_FILE" ]; then
  # shellcheck disable=SC1090
  . "$PORTS_FILE"
fi
PG_PORT="${STACK_PG_PORT:-${SAVED_PG_PORT:-54322}}"
NATS_PORT="${STACK_NATS_PORT:-${SAVED_NATS_PORT:-14222}}"
NATS_MONITOR_PORT="${STACK_NATS_MONITOR_PORT:-${SAVED_NATS_MONITOR_PORT:-18222}}"
CDC_HTTP_PORT="${CDC_HTTP_PORT:-${SAVED_CDC_HTTP_PORT:-8081}}"
WS_PORT="${WS_PORT:-${SAVED_WS_PORT:-4000}}"
AURA_JWT_SECRET="${AURA_JWT_SECRET:-aura-dev-secret-change-me-please-32bytes!}"
WAL2JSON_SCRIPT="$ROOT/docker/postgres-wal2json/install-wal2json.sh"
CDC_JAR="$ROOT/cdc-worker/target/cdc-worker.jar"
WS_JAR="$ROOT/ws-front/target/ws-front.jar"
DEMO_PROJECT_ID="00000000-0000-0000-0000-00000000d3e0"
DEMO_SCHEMA="project_${DEMO_PROJECT_ID//-/_}"
# Postgres policy (docs/operations.md, "Postgres versions"): any installed postgresql-$PG_MAJOR minor
# release is used as it is; install only what is missing, never upgrade or downgrade. What differs
# between minor releases (output_plugin_libraries) is detected by install-wal2json.sh configure.
APT_PACKAGES=("postgresql-$PG_MAJOR" "postgresql-$PG_MAJOR-wal2json" "nats-server" "curl" "chromium")

log() { printf '\033[1mstack:\033[0m %s\n' "$*" >&2; }
die() { printf 'stack: error: %s\n' "$*" >&2; exit 1; }

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
# Postgres refuses to run as root; run its tools as the postgres OS user when we are root.
as_postgres() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

psql_demo() {
  "$PG_BIN/psql" -X -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 "$@"
}

# ---- install -----------------------------------------------------------------------------

missing_apt_packages() {
  local pkg status
  for pkg in "${APT_PACKAGES[@]}"; do
    # Capture first: "dpkg-query | grep -q" can fail on SIGPIPE under pipefail.
    status="$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)"
    [ "$status" = "install ok installed" ] || echo "$pkg"
  done
  command -v node >/dev/null || echo nodejs
  command -v npm >/dev/null || echo npm
  command -v mvn >/dev/null || echo maven
}

apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  # A fresh box has empty package lists; refresh them when they are missing or the install fails.
  if [ -z "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v -e lock -e partial || true)" ]; then
    as_root apt-get update
  fi
  if ! as_root apt-get install -y --no-install-recommends "$@"; then
    as_root apt-get update
    as_root apt-get install -y --no-install-recommends "$@"
  fi
}

# Prints the major version of the java binary $1 (e.g. 25), or 0.
java_major() {
  local version
  version="$("$1" -version 2>&1 | awk -F'"' '/version/ {print $2; exit}')" || true
  version="${version#1.}"
  echo "${version%%[.+-]*}" | grep -E '^[0-9]+$' || echo 0
}

# Picks a JDK >= 21 for Maven: $JAVA_HOME if good, else Temurin 25, else any /usr/lib/jvm/* JDK.
resolve_java_home() {
  local candidate
  for candidate in "${JAVA_HOME:-}" /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/*; do
    [ -n "$candidate" ] && [ -x "$candidate/bin/javac" ] || continue
    if [ "$(java_major "$candidate/bin/java")" -ge 21 ]; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

npm_install_e2e() {
  local dir="$ROOT/e2e/js"
  if [ -f "$dir/package-lock.json" ]; then
    # npm ci wipes node_modules; skip it when the installed tree matches the lock file.
    if [ -f "$dir/node_modules/.package-lock.json" ] && [ "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ]; then
      log "e2e/js/node_modules is up to date"
      return 0
    fi
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  else
    (cd "$dir" && npm install --no-audit --no-fund --loglevel=error)
  fi
}

cmd_install() {
  local missing
  missing="$(missing_apt_packages | tr '\n' ' ')"
  if [ -n "${missing// /}" ]; then
    log "installing: $missing"
    # shellcheck disable=SC2086
    apt_install $missing
  fi
  bash "$WAL2JSON_SCRIPT" install "$PG_MAJOR"
  [ -x "$PG_BIN/postgres" ] || die "$PG_BIN/postgres missing after installing postgresql-$PG_MAJOR"
  command -v nats-server >/dev/null || [ -x /usr/sbin/nats-server ] || die "nats-server missing after apt-get install"
  local jdk
  jdk="$(resolve_java_home)" || die "no JDK >= 21 found (looked at \$JAVA_HOME and /usr/lib/jvm/*); install Temurin 25: https://adoptium.net/installation/linux/"
  log "JDK for Maven: $jdk"
  npm_install_e2e
  log "install complete"
}

install_needed() {
  [ -n "$(missing_apt_packages)" ] && return 0
  [ -f "$PG_BIN/../lib/wal2json.so" ] || [ -f "/usr/lib/postgresql/$PG_MAJOR/lib/wal2json.so" ] || return 0
  [ -d "$ROOT/e2e/js/node_modules/@supabase/realtime-js" ] || return 0
  return 1
}

# ---- processes ---------------------------------------------------------------------------

# True if the pid in file $1 is alive and its command line contains $2 (guards against pid reuse).
pid_alive() {
  local file="$1" needle="$2" pid
  [ -f "$file" ] || return 1
  pid="$(cat "$file")"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$needle"
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

save_ports() {
  mkdir -p "$STACK"
  printf 'SAVED_PG_PORT=%s\nSAVED_NATS_PORT=%s\nSAVED_NATS_MONITOR_PORT=%s\nSAVED_CDC_HTTP_PORT=%s\nSAVED_WS_PORT=%s\n' \
    "$PG_PORT" "$NATS_PORT" "$NATS_MONITOR_PORT" "$CDC_HTTP_PORT" "$WS_PORT" >"$PORTS_FILE"
}

# What this 'up' started, in order: stopped again if it fails (up_cleanup).
STARTED=()

# Before anything starts: every port a component that is not running yet needs must be free.
check_ports() {
  local services_only="$1" taken=()
  if ! { [ -f "$PG_DATA/PG_VERSION" ] && pg_running; }; then
    port_in_use "$PG_PORT" && taken+=("$PG_PORT (Postgres; STACK_PG_PORT)")
  fi
  if ! pid_alive "$STACK/nats.pid" nats-server; then
    port_in_use "$NATS_PORT" && taken+=("$NATS_PORT (NATS; STACK_NATS_PORT)")
    port_in_use "$NATS_MONITOR_PORT" && taken+=("$NATS_MONITOR_PORT (NATS monitoring; STACK_NATS_MONITOR_PORT)")
  fi
  if [ "$services_only" -eq 0 ]; then
    if ! pid_alive "$STACK/cdc-worker.pid" "$CDC_JAR"; then
      port_in_use "$CDC_HTTP_PORT" && taken+=("$CDC_HTTP_PORT (cdc-worker HTTP; CDC_HTTP_PORT)")
    fi
    if ! pid_alive "$STACK/ws-front.pid" "$WS_JAR"; then
      port_in_use "$WS_PORT" && taken+=("$WS_PORT (ws-front; WS_PORT)")
    fi
  fi
  if [ "${#taken[@]}" -gt 0 ]; then
    local t
    for t in "${taken[@]}"; do log "port $t is taken by another program"; done
    die "nothing was started: stop the other program, or choose another port with the variable named above"
  fi
}

# EXIT trap of 'up': when it failed, stops what it had started (newest first) and says so.
up_cleanup() {
  local status=$? i
  trap - EXIT
  [ "$status" -ne 0 ] && [ "${#STARTED[@]}" -gt 0 ] || exit "$status"
  for ((i = ${#STARTED[@]} - 1; i >= 0; i--)); do
    case "${STARTED[$i]}" in
      ws-front) stop_pid "$STACK/ws-front.pid" "$WS_JAR" 15 ;;
      cdc-worker) stop_pid "$STACK/cdc-worker.pid" "$CDC_JAR" 15 ;;
      nats-server) stop_pid "$STACK/nats.pid" nats-server 10 ;;
      postgres) as_postgres "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w -t 60 stop >/dev/null 2>&1 || true ;;
    esac
  done
  printf 'stack: up failed; stopped what it had started: %s\n' "${STARTED[*]}" >&2
  exit "$status"
}

# True while process $1 exists and is not a zombie. Used for a process this shell has just started:
# its command line changes while nohup/setsid/env exec into the service (java), so the command-line
# check of pid_alive reported a starting service as exited (issue 24 point 7).
proc_running() {
  local pid="$1" stat
  kill -0 "$pid" 2>/dev/null || return 1
  stat="$(cat "/proc/$pid/stat" 2>/dev/null)" || return 1
  stat="${stat##*) }"
  [ "${stat%% *}" != "Z" ]
}

# Waits until command "$@" succeeds. $4 is the pid file of a process this shell has started (or
# empty); if that process exits first, its exit status is reported. $5 is unused (kept for callers).
wait_for() {
  local what="$1" seconds="$2" log_file="$3" pid_file="$4"
  shift 5
  local deadline=$((SECONDS + seconds)) pid="" status
  [ -n "$pid_file" ] && pid="$(cat "$pid_file")"
  until "$@"; do
    if [ -n "$pid" ] && ! proc_running "$pid"; then
      # The readiness check may have succeeded just before a clean exit: the process is gone either way.
      status=0
      wait "$pid" 2>/dev/null || status=$?
      tail -n 40 "$log_file" >&2 || true
      # 127: not our child (left running by an earlier 'up'), so its status is unknown.
      [ "$status" -eq 127 ] && die "$what: the process exited (log: $log_file)"
      die "$what: the process exited with status $status (log: $log_file)"
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      tail -n 40 "$log_file" >&2 || true
      die "$what: not ready after ${seconds}s (log: $log_file)"
    fi
    sleep 0.5
  done
}

# Sends SIGTERM to the process in pid file $1, waits up to $3 seconds, then SIGKILLs it.
stop_pid() {
  local file="$1" needle="$2" grace="$3" pid i
  if pid_alive "$file" "$needle"; then
    pid="$(cat "$file")"
    log "stopping $(basename "$file" .pid) (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < grace * 10; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      log "$(basename "$file" .pid) did not stop within ${grace}s; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  rm -f "$file"
}

# ---- Postgres ----------------------------------------------------------------------------

pg_running() { as_postgres "$PG_BIN/pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1; }

init_postgres() {
  [ -f "$PG_DATA/PG_VERSION" ] && return 0
  log "initialising Postgres cluster in $PG_DATA"
  mkdir -p "$STACK/pg"
  if [ "$(id -u)" -eq 0 ]; then chown postgres:postgres "$STACK/pg"; fi
  chmod 700 "$STACK/pg"
  as_postgres "$PG_BIN/initdb" -D "$PG_DATA" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >"$LOGS/initdb.log" 2>&1 \
    || { cat "$LOGS/initdb.log" >&2; die "initdb failed"; }
  cat >>"$PG_DATA/postgresql.conf" <<EOF

# aura-realtime local stack (scripts/stack.sh)
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$STACK/pg'
EOF
  bash "$WAL2JSON_SCRIPT" configure "$PG_DATA/postgresql.conf" "$PG_BIN/postgres"
}

start_postgres() {
  init_postgres
  if pg_running; then
    log "Postgres already running on 127.0.0.1:$PG_PORT"
    return 0
  fi
  port_in_use "$PG_PORT" && die "port $PG_PORT is taken by another process; stop it or set STACK_PG_PORT"
  log "starting Postgres on 127.0.0.1:$PG_PORT"
  touch "$LOGS/postgres.log"
  if [ "$(id -u)" -eq 0 ]; then chown postgres "$LOGS/postgres.log"; fi
  as_postgres "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$LOGS/postgres.log" -w -t 60 start >/dev/null \
    || { tail -n 30 "$LOGS/postgres.log" >&2; die "Postgres did not start (log: $LOGS/postgres.log)"; }
  STARTED+=(postgres)
}

# ---- NATS --------------------------------------------------------------------------------

nats_healthy() { curl -fsS "http://127.0.0.1:$NATS_MONITOR_PORT/healthz" >/dev/null 2>&1; }

NATS_AUTH="$STACK/nats/auth.env"

# Generates the three NATS passwords once (kept across restarts in $NATS_AUTH) and loads them.
nats_credentials() {
  mkdir -p "$STACK/nats"
  if [ ! -f "$NATS_AUTH" ]; then
    (
      umask 077
      printf 'NATS_CDC_PASSWORD=%s\nNATS_WS_PASSWORD=%s\nNATS_DEV_PASSWORD=%s\n' \
        "$(random_hex)" "$(random_hex)" "$(random_hex)" >"$NATS_AUTH"
    )
  fi
  # shellcheck disable=SC1090
  . "$NATS_AUTH"
}

random_hex() { head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n'; }

# nats.conf with the product's users and permissions (the chart's file, included from a copy:
# NATS resolves includes relative to the including file).
write_nats_config() {
  cp "$ROOT/deploy/k8s/files/nats-permissions.conf" "$STACK/nats/nats-permissions.conf"
  (
    umask 077
    cat >"$STACK/nats/nats.conf" <<EOF
listen: "127.0.0.1:$NATS_PORT"
http: "127.0.0.1:$NATS_MONITOR_PORT"
server_name: aura-local
jetstream {
  store_dir: "$STACK/nats"
  max_memory_store: 256MB
}
include ./nats-permissions.conf
authorization {
  users = [
    {user: "aura-cdc-worker", password: "$NATS_CDC_PASSWORD", permissions: \$AURA_CDC_WORKER_PERMISSIONS}
    {user: "aura-ws-front", password: "$NATS_WS_PASSWORD", permissions: \$AURA_WS_FRONT_PERMISSIONS}
    {user: "aura-dev", password: "$NATS_DEV_PASSWORD"}
  ]
}
EOF
  )
}

start_nats() {
  nats_credentials
  if pid_alive "$STACK/nats.pid" nats-server; then
    log "nats-server already running on 127.0.0.1:$NATS_PORT"
    return 0
  fi
  port_in_use "$NATS_PORT" && die "port $NATS_PORT is taken by another process; stop it or set STACK_NATS_PORT"
  local bin
  bin="$(command -v nats-server || echo /usr/sbin/nats-server)"
  write_nats_config
  log "starting nats-server (JetStream, authentication on) on 127.0.0.1:$NATS_PORT (monitoring :$NATS_MONITOR_PORT)"
  nohup setsid "$bin" -c "$STACK/nats/nats.conf" >>"$LOGS/nats.log" 2>&1 </dev/null &
  echo $! >"$STACK/nats.pid"
  STARTED+=(nats-server)
  wait_for "nats-server" 20 "$LOGS/nats.log" "$STACK/nats.pid" nats-server nats_healthy
}

# ---- binaries ----------------------------------------------------------------------------

jars_stale() {
  [ -f "$CDC_JAR" ] && [ -f "$WS_JAR" ] || return 0
  local oldest="$CDC_JAR"
  [ "$WS_JAR" -ot "$oldest" ] && oldest="$WS_JAR"
  [ -n "$(find "$ROOT/pom.xml" "$ROOT"/{common,cdc-worker,ws-front}/pom.xml "$ROOT"/{common,cdc-worker,ws-front}/src \
    -newer "$oldest" -type f -print -quit 2>/dev/null)" ]
}

build_jars() {
  jars_stale || { log "jars are up to date"; return 0; }
  local jdk
  jdk="$(resolve_java_home)" || die "no JDK >= 21 found; run scripts/stack.sh install"
  log "building jars (mvn -q -DskipTests package, JAVA_HOME=$jdk)"
  (cd "$ROOT" && JAVA_HOME="$jdk" mvn -q -B -DskipTests package) \
    || die "the build failed (see the Maven output above); fix it or use 'up --services-only' for Postgres and NATS only"
  [ -f "$CDC_JAR" ] || die "the build succeeded but $CDC_JAR is missing (does cdc-worker build a runnable jar named cdc-worker.jar?)"
  [ -f "$WS_JAR" ] || die "the build succeeded but $WS_JAR is missing (does ws-front build a runnable jar named ws-front.jar?)"
}

# Starts jar $2 as service $1 with the environment given as the remaining KEY=VALUE arguments.
start_service() {
  local name="$1" jar="$2"
  shift 2
  if pid_alive "$STACK/$name.pid" "$jar"; then
    log "$name already running (pid $(cat "$STACK/$name.pid"))"
    return 0
  fi
  local java
  java="$(resolve_java_home)/bin/java" || die "no JDK >= 21 found; run scripts/stack.sh install"
  log "starting $name (log: $LOGS/$name.log)"
  echo "=== $(date -Is) starting $name" >>"$LOGS/$name.log"
  nohup setsid env -i PATH="$PATH" HOME="${HOME:-/root}" LANG="${LANG:-C.UTF-8}" "$@" "$java" -jar "$jar" \
    >>"$LOGS/$name.log" 2>&1 </dev/null &
  echo $! >"$STACK/$name.pid"
  STARTED+=("$name")
}

cdc_healthy() { curl -sS -o /dev/null "http://127.0.0.1:$CDC_HTTP_PORT/health" 2>/dev/null; }

platform_ready() {
  [ "$(psql_demo -tA -c "select to_regclass('aura_platform.realtime_tables') is not null
      and exists (select 1 from pg_roles where rolname = 'aura_anon')
      and exists (select 1 from pg_roles where rolname = 'aura_authenticated')" 2>/dev/null)" = "t" ]
}

ws_listening() { port_in_use "$WS_PORT"; }

seed_demo() {
  log "seeding demo project $DEMO_PROJECT_ID (schema $DEMO_SCHEMA, table messages)"
  psql_demo <<SQL
set client_min_messages = warning;
create schema if not exists $DEMO_SCHEMA;
insert into aura_platform.projects (project_id, schema_name)
  values ('$DEMO_PROJECT_ID', '$DEMO_SCHEMA') on conflict (project_id) do nothing;
create table if not exists $DEMO_SCHEMA.messages (
  id bigserial primary key,
  body text not null,
  author text,
  created_at timestamptz not null default now()
);
alter table $DEMO_SCHEMA.messages replica identity full;
grant select, insert, update, delete on $DEMO_SCHEMA.messages to aura_anon, aura_authenticated;
grant usage, select on sequence $DEMO_SCHEMA.messages_id_seq to aura_anon, aura_authenticated;
insert into aura_platform.realtime_tables (project_id, table_name, enabled)
  values ('$DEMO_PROJECT_ID', 'messages', true)
  on conflict (project_id, table_name) do update set enabled = true, updated_at = now()
  where not aura_platform.realtime_tables.enabled;
SQL
}

mint() { node "$ROOT/scripts/mint-jwt.mjs" --secret "$AURA_JWT_SECRET" --role "$1" --ref "$DEMO_PROJECT_ID"; }

print_banner() {
  local anon service
  anon="$(mint anon)"
  service="$(mint service_role)"
  cat <<EOF

aura-realtime local stack is up.

  WebSocket     ws://localhost:$WS_PORT/realtime/v1/websocket
  supabase-js   createClient('http://localhost:$WS_PORT', ANON_KEY, { realtime: { transport: WebSocket } })
                (Node 20: import WebSocket from 'ws'; see README.md)
  own table     scripts/stack.sh enable <table>   (enables realtime and grants SELECT to anon, authenticated)
  demo page     http://localhost:$WS_PORT/?apikey=$anon
  health        curl -s localhost:$CDC_HTTP_PORT/health
  NATS          nats://aura-dev:$NATS_DEV_PASSWORD@127.0.0.1:$NATS_PORT (authentication on)
  logs          $LOGS/

  ANON_KEY=$anon
  SERVICE_ROLE_KEY=$service

Insert a row (schema 'public' for clients = $DEMO_SCHEMA):
  psql -h 127.0.0.1 -p $PG_PORT -U postgres -d postgres -c "insert into $DEMO_SCHEMA.messages (body, author) values ('hello', 'me')"

Listen with realtime-js (cd e2e/js && node --input-type=module):
  import { RealtimeClient } from '@supabase/realtime-js'
  import WebSocket from 'ws'
  const client = new RealtimeClient('ws://localhost:$WS_PORT/realtime/v1', {
    params: { apikey: '$anon' },
    transport: WebSocket,
  })
  client.channel('room-1')
    .on('postgres_changes', { event: '*', schema: 'public', table: 'messages' }, (p) => console.log(p))
    .on('broadcast', { event: '*' }, (m) => console.log(m))
    .on('system', {}, (m) => console.log('system:', m.status, m.message))
    .subscribe((status, err) => console.log(status, err ? err.message : ''))

EOF
}

print_services_banner() {
  cat <<EOF

Postgres and NATS are up (--services-only; cdc-worker and ws-front not started).
  Postgres  jdbc:postgresql://127.0.0.1:$PG_PORT/postgres?user=postgres
            psql -h 127.0.0.1 -p $PG_PORT -U postgres -d postgres
  NATS      nats://aura-dev:$NATS_DEV_PASSWORD@127.0.0.1:$NATS_PORT  (monitoring http://127.0.0.1:$NATS_MONITOR_PORT)
            binaries: NATS_USER=aura-cdc-worker / aura-ws-front, passwords in $NATS_AUTH
EOF
}

cmd_up() {
  local services_only=0
  for arg in "$@"; do
    case "$arg" in
      --services-only) services_only=1 ;;
      *) die "unknown option for up: $arg" ;;
    esac
  done
  mkdir -p "$LOGS"
  if install_needed; then cmd_install; fi
  [ "$services_only" -eq 1 ] || build_jars
  pg_port_matches_cluster
  check_ports "$services_only"
  save_ports
  trap up_cleanup EXIT
  start_postgres
  start_nats
  if [ "$services_only" -eq 1 ]; then
    print_services_banner
    return 0
  fi
  start_service cdc-worker "$CDC_JAR" \
    POSTGRES_REPLICATION_URL="jdbc:postgresql://127.0.0.1:$PG_PORT/postgres?user=postgres" \
    NATS_URL="nats://127.0.0.1:$NATS_PORT" \
    NATS_USER=aura-cdc-worker \
    NATS_PASSWORD="$NATS_CDC_PASSWORD" \
    AURA_JWT_SECRET="$AURA_JWT_SECRET" \
    CDC_HTTP_PORT="$CDC_HTTP_PORT" \
    LEADER_ELECTION=disabled
  wait_for "cdc-worker /health" 90 "$LOGS/cdc-worker.log" "$STACK/cdc-worker.pid" "$CDC_JAR" cdc_healthy
  wait_for "aura_platform schema and roles" 60 "$LOGS/cdc-worker.log" "$STACK/cdc-worker.pid" "$CDC_JAR" platform_ready
  seed_demo
  start_service ws-front "$WS_JAR" \
    NATS_URL="nats://127.0.0.1:$NATS_PORT" \
    NATS_USER=aura-ws-front \
    NATS_PASSWORD="$NATS_WS_PASSWORD" \
    AURA_JWT_SECRET="$AURA_JWT_SECRET" \
    WS_PORT="$WS_PORT"
  wait_for "ws-front on port $WS_PORT" 60 "$LOGS/ws-front.log" "$STACK/ws-front.pid" "$WS_JAR" ws_listening
  trap - EXIT
  print_banner
}

# The cluster's port is fixed in its postgresql.conf when it is initialised.
pg_port_matches_cluster() {
  [ -f "$PG_DATA/postgresql.conf" ] || return 0
  local port
  port="$(sed -n 's/^port = \([0-9]*\)$/\1/p' "$PG_DATA/postgresql.conf" | tail -n 1)"
  [ -z "$port" ] || [ "$port" = "$PG_PORT" ] \
    || die "the Postgres cluster in $PG_DATA listens on port $port (set when it was created), not $PG_PORT; unset STACK_PG_PORT, or 'down --purge' to start afresh"
}

cmd_enable() {
  local table="${1:-}"
  [ "$#" -eq 1 ] && [ -n "$table" ] \
    || die "usage: scripts/stack.sh enable <table> (a table of schema $DEMO_SCHEMA, which clients call 'public')"
  [[ "$table" =~ ^[a-z_][a-z0-9_]*$ ]] \
    || die "'$table': give the table's name as a lower-case SQL identifier (letters, digits, _), without schema"
  cdc_healthy || die "no cdc-worker answers on 127.0.0.1:$CDC_HTTP_PORT; run scripts/stack.sh up first"
  local body status
  body="$(mktemp)"
  status="$(curl -sS -o "$body" -w '%{http_code}' -X PUT \
    "http://127.0.0.1:$CDC_HTTP_PORT/v1/db/$DEMO_PROJECT_ID/schema/tables/$table/realtime" \
    -H "apikey: $(mint service_role)" -H 'Content-Type: application/json' -d '{"enabled": true}')" || status=000
  if [ "${status:0:1}" != 2 ]; then
    local answer
    answer="$(cat "$body")"
    rm -f "$body"
    die "enabling $DEMO_SCHEMA.$table failed (HTTP $status): $answer
create it first, with a primary key, e.g.:
  psql -h 127.0.0.1 -p $PG_PORT -U postgres -c \"create table $DEMO_SCHEMA.$table (id bigserial primary key, body text)\""
  fi
  rm -f "$body"
  psql_demo -c "grant select on $DEMO_SCHEMA.$table to aura_anon, aura_authenticated"
  log "realtime enabled on $DEMO_SCHEMA.$table (replica identity full) and SELECT granted to anon and authenticated"
  log "subscribe with { event: '*', schema: 'public', table: '$table' }"
}

cmd_down() {
  local purge=0
  for arg in "$@"; do
    case "$arg" in
      --purge) purge=1 ;;
      *) die "unknown option for down: $arg" ;;
    esac
  done
  stop_pid "$STACK/ws-front.pid" "$WS_JAR" 15
  stop_pid "$STACK/cdc-worker.pid" "$CDC_JAR" 15
  stop_pid "$STACK/nats.pid" nats-server 10
  if [ -f "$PG_DATA/PG_VERSION" ] && pg_running; then
    log "stopping Postgres"
    as_postgres "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w -t 60 stop >/dev/null
  fi
  if [ "$purge" -eq 1 ]; then
    log "deleting $STACK"
    rm -rf "$STACK"
  fi
  log "stack is down"
}

cmd_status() {
  local state
  if [ -f "$PG_DATA/PG_VERSION" ] && pg_running; then state="running"; else state="stopped"; fi
  printf '%-11s %-8s %s\n' postgres "$state" "127.0.0.1:$PG_PORT ($PG_DATA)"
  if pid_alive "$STACK/nats.pid" nats-server; then state="running"; else state="stopped"; fi
  printf '%-11s %-8s %s\n' nats "$state" "127.0.0.1:$NATS_PORT"
  if pid_alive "$STACK/cdc-worker.pid" "$CDC_JAR"; then state="running"; else state="stopped"; fi
  printf '%-11s %-8s %s\n' cdc-worker "$state" "health: $(curl -s --max-time 2 "http://127.0.0.1:$CDC_HTTP_PORT/health" 2>/dev/null || echo -)"
  if pid_alive "$STACK/ws-front.pid" "$WS_JAR"; then state="running"; else state="stopped"; fi
  printf '%-11s %-8s %s\n' ws-front "$state" "ws://localhost:$WS_PORT/realtime/v1/websocket"
}

main() {
  local cmd="${1:-}"
  shift || true
  case "$cmd" in
    install) cmd_install "$@" ;;
    up) cmd_up "$@" ;;
    down) cmd_down "$@" ;;
    status) cmd_status "$@" ;;
    enable) cmd_enable "$@" ;;
    *) sed -n '2,9p' "${BASH_SOURCE[0]}" >&2; exit 2 ;;
  esac
}

main "$@"
