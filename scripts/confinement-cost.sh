#!/usr/bin/env bash
# The cost of the confinement guard (issue 36, docs/security.md "The confinement cannot be
# edited"): on a throwaway PostgreSQL cluster (initdb in a temporary directory, trust auth, a free
# port; removed afterwards) with 1,000 projects' runners, times REPS (default 500) of each of: a
# tenant's DDL transaction with the guard's event triggers on and off, the same as the platform,
# and a persist with the pre-commit check before and after the fix (scripts/ConfinementCost.java).
#
# Usage: scripts/confinement-cost.sh [REPS]       (needs cdc-worker/target/cdc-worker.jar: mvn -q package -DskipTests)
set -euo pipefail
cd "$(dirname "$0")/.."
reps="${1:-500}"
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
PG_BIN="/usr/lib/postgresql/${PG_MAJOR:-15}/bin"
jar="cdc-worker/target/cdc-worker.jar"
[ -f "$jar" ] || { echo "missing $jar: run mvn -q package -DskipTests" >&2; exit 1; }
as_pg=()
[ "$(id -u)" = 0 ] && as_pg=(runuser -u postgres --)
dir="$(mktemp -d /tmp/aura-confinement-cost.XXXXXX)"
chmod 777 "$dir"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
cleanup() { "${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap cleanup EXIT
"${as_pg[@]}" "$PG_BIN/initdb" -D "$dir/data" -U postgres -A trust >/dev/null
"${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
  -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null
"${as_pg[@]}" "$PG_BIN/psql" -h "$dir" -p "$port" -U postgres -qc "SELECT version()" -At
"$JAVA_HOME/bin/java" -cp "$jar" scripts/ConfinementCost.java "jdbc:postgresql://127.0.0.1:$port/postgres" "$reps"
