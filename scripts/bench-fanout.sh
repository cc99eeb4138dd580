#!/usr/bin/env bash
# The ws-front figures only (fan-out against raw NATS, heap per idle connection, optionally N
# connections with one broadcast to all): quick runs and profiles of the write path. Prints the
# table; writes bench/target/bench-run/fanout-report.md (docs/performance.md is written by
# scripts/bench.sh only). ws-front and nats-server are pinned to CPU 0, the load generator to CPU 1.
#
# Usage: scripts/bench-fanout.sh [--skip-build] [--clients 5000] [--burst-rate 100] [--burst-seconds 6]
#                                [--light-rate 5] [--light-seconds 6] [--rounds 5] [--idle 10000] [--scale 100000]
# Profile: bench/target/bench-run/ws-front-fanout.jfr (summary printed; jfr print --events jdk.ExecutionSample ...)
set -euo pipefail
cd "$(dirname "$0")/.."

export JAVA_HOME="${JAVA_HOME_BENCH:-/usr/lib/jvm/temurin-25-jdk-amd64}"
export PATH="$JAVA_HOME/bin:$PATH"

build=1
args=()
for a in "$@"; do
  case "$a" in
    --skip-build) build=0 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) args+=("$a") ;;
  esac
done

# ws-front and this load generator each hold one descriptor per connection.
source scripts/lib/limits.sh
raise_open_files 110000 "bench-fanout.sh" || true   # figures above the limit are capped and say so

if [ "$build" = 1 ]; then
  echo "== building (mvn -DskipTests package -pl bench -am)"
  mvn -q -DskipTests package -pl bench -am
fi

mkdir -p bench/target/bench-run
cd bench   # service logs land in bench/target/service-logs
exec java -Xms1g -Xmx4g -XX:+UseParallelGC -cp target/bench.jar dev.aura.realtime.bench.FanoutMain "${args[@]}"
