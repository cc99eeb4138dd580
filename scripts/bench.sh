#!/usr/bin/env bash
# Runs the benchmarks of issue 8 (and issue 5's RLS figure) on this machine: builds the jars,
# starts a throw-away Postgres (wal2json) and nats-server, runs the cdc-worker and ws-front jars,
# prints one table and writes docs/performance.md.
#
# Usage: scripts/bench.sh [--quick] [--cdc-only] [--joins-only] [--skip-build] [--out FILE]
#   --quick       smaller workloads (about 4 minutes; a full run takes about 10 minutes here: CDC
#                 throughput with both sources, Debezium as the peer, latency with both sources, ...)
#   --cdc-only    figures 1 and 2 only (throughput with the peer, latency); prints the table and
#                 writes a report only with --out (docs/performance.md is left alone)
#   --joins-only  figure 6 only (private joins with a read policy against public joins, about 1
#                 minute); prints the table and writes a report only with --out
#   --skip-build  reuse the jars already in */target
#   --out FILE    write the report elsewhere than docs/performance.md
# Logs, GC logs and JFR recordings: bench/target/bench-run/ and bench/target/service-logs/.
set -euo pipefail
cd "$(dirname "$0")/.."

export JAVA_HOME="${JAVA_HOME_BENCH:-/usr/lib/jvm/temurin-25-jdk-amd64}"
export PATH="$JAVA_HOME/bin:$PATH"

build=1
args=()
for a in "$@"; do
  case "$a" in
    --skip-build) build=0 ;;
    --quick|--out|--cdc-only|--joins-only) args+=("$a") ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) args+=("$a") ;;
  esac
done

# 10,000 idle sockets plus 5,000 fan-out clients: raise the open-files limit as far as allowed.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 12000 ]; then
  echo "bench.sh: open files limit is $(ulimit -n); the idle-connection figure needs about 11,000" >&2
fi

if [ "$build" = 1 ]; then
  echo "== building (mvn -DskipTests install)"
  mvn -q -DskipTests install
  if [ ! -d e2e/js/node_modules ]; then
    echo "== npm ci --prefix e2e/js (realtime-js for the latency cross-check)"
    npm ci --prefix e2e/js --no-audit --no-fund --loglevel=error
  fi
fi

mkdir -p bench/target/bench-run
cd bench   # service logs land in bench/target/service-logs
exec java -Xms1g -Xmx3g -XX:+UseParallelGC -jar target/bench.jar "${args[@]}"
