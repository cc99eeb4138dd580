#!/usr/bin/env bash
# The cost of the per-project database identity (issue 22): bench figures 5 (RLS checks, batched
# vs naive) and 6 (private joins vs public joins) with the cdc-worker built before it (BASE,
# default 09e747c) and with this checkout's, alternating BASE / this for ROUNDS rounds (default 2),
# each round on a fresh Postgres and nats-server, the same bench harness and ws-front. Prints
# each run's table; docs/performance-analysis-2026-12.md ("Per-project identity") has the committed comparison.
#
# Usage: scripts/bench-identity.sh [BASE] [--full]     (about 3 minutes per run with the quick sizes)
set -euo pipefail
cd "$(dirname "$0")/.."
base="${1:-09e747c}"
sizes="--quick"
[ "${2:-}" = "--full" ] && sizes=""
rounds="${ROUNDS:-2}"
export JAVA_HOME="${JAVA_HOME_BENCH:-/usr/lib/jvm/temurin-25-jdk-amd64}"
export PATH="$JAVA_HOME/bin:$PATH"
source scripts/lib/limits.sh
raise_open_files 110000 "bench-identity.sh" || true

echo "== building this checkout (mvn -DskipTests package)"
mvn -q -DskipTests package
[ -d e2e/js/node_modules ] || npm ci --prefix e2e/js --no-audit --no-fund --loglevel=error
dir="bench/target/identity-base-$base"
if [ ! -f "$dir/cdc-worker/target/cdc-worker.jar" ]; then
  echo "== building the cdc-worker of $base in $dir"
  rm -rf "$dir" && mkdir -p "$dir"
  git archive "$base" | tar -x -C "$dir"
  (cd "$dir" && mvn -q -DskipTests -Dspotless.check.skip=true -pl cdc-worker -am package)
fi
before="$(cd "$dir" && pwd)/cdc-worker/target/cdc-worker.jar"

mkdir -p bench/target/bench-run
cd bench
for r in $(seq 1 "$rounds"); do
  for which in before after; do
    jar=""
    [ "$which" = before ] && jar="$before"
    echo "== round $r: $which ($([ -n "$jar" ] && echo "$base" || echo this checkout))"
    AURA_BENCH_CDC_JAR="$jar" java -Xms1g -Xmx4g -XX:+UseParallelGC -jar target/bench.jar $sizes --identity-only \
      | tee "target/identity-$which-$r.txt"
  done
done
