#!/usr/bin/env bash
# Runs the benchmarks of issue 8 (with issue 5's RLS figure, issue 18's CDC figures and issue 19's
# fan-out figures) on this machine: builds the jars, starts a throw-away Postgres (wal2json) and
# nats-server, runs the cdc-worker and ws-front jars, prints one table and writes
# docs/performance.md.
#
# Usage: scripts/bench.sh [--quick] [--cdc-only] [--joins-only] [--matching-only] [--rls-only] [--dbcast-only] [--skip-build] [--out FILE] [--scale N]
#                         [--rounds N] [--profile] [--storm-clients N] [--reconnect-clients N]
#   (no flag)     the full run, about 11 minutes on a quiet 2-core box: figures 1 (CDC throughput: stream,
#                 poll and Debezium on warm processes, 3 alternating rounds of 100k-row backlogs),
#                 2 (latency, warm, 3 alternating rounds of stream and poll), 27 (figures 1 and 2
#                 with postgres_changes resume off and on, 3 alternating rounds), 3 (fan-out against raw
#                 NATS, 3 alternating rounds), 4a/4b/4c (memory; one run each), 5 (RLS against the
#                 reference method, 3 alternating rounds), 7 (matching), 10 (Broadcast from
#                 Database), 6/8/8b/9 (joins and storms). Medians and spreads in the table, every
#                 round listed; a target is met only on the median.
#   --quick       smaller backlogs, segments and bursts, figure 4c skipped (about 5-7 minutes): shows
#                 that every figure runs and roughly where it stands; its ratios are indicative only
#   --rounds N    rounds of each timed figure (default 3)
#   --profile     a separate, profiled run: services record JFR and the report summarises the hot
#                 methods (timed runs never run a profiler; don't compare a profiled run's figures)
#   --cdc-only    figures 1 and 2 only (throughput with the peer, latency); prints the table and
#                 writes a report only with --out (docs/performance.md is left alone)
#   --joins-only  the join figures only (about 4 minutes at full size): 6 (private joins with a
#                 read policy) and 8 (postgres_changes joins) against public joins, 32 in flight;
#                 8b (a join storm through two replicas) and 9 (a reconnect storm after a replica
#                 is killed); prints the table and writes a report only with --out
#   --identity-only  figures 5 and 6 only (scripts/bench-identity.sh runs them before/after issue 22)
#   --matching-only  figure 7 only (changes/s with 10,001 bindings vs 1, same run); prints the
#                 table and writes a report only with --out
#   --resume-compare  issue 27's cost: figures 1 (single-row txns backlog) and 2 (1,000 rows/s)
#                 with postgres_changes resume off and on (the project's limits row switched between
#                 turns) on one warm worker and ws-front, --rounds alternating rounds; prints medians
#                 and the on/off ratios; writes a report only with --out
#   --rls-only    figure 5 only: batched RLS vs the reference method (walrus's shape), 3 alternating rounds
#   --dbcast-only figure 10 only: Broadcast from Database to a private channel (realtime-js + Java
#                 subscribers) at 1,000 and 10,000 msg/s and as a backlog, vs plain table inserts
#   --skip-build  reuse the jars already in */target
#   --out FILE    write the report elsewhere than docs/performance.md
#   --scale N     connections of figure 4c (default 100000 in a full run, skipped with --quick)
#   --storm-clients N      clients of figure 8b's join storm (default 600)
#   --reconnect-clients N  clients of figure 9's reconnect storm (default 5000, 1000 with --quick)
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
    --quick|--out|--cdc-only|--joins-only|--matching-only|--scale) args+=("$a") ;;
    -h|--help) sed -n '2,43p' "$0"; exit 0 ;;
    *) args+=("$a") ;;
  esac
done

# 100,000 connections (figure 4c) cost one descriptor each in ws-front and in the load generator:
# raise the open files limit; where it cannot reach that, figure 4c runs with fewer and says so.
source scripts/lib/limits.sh
raise_open_files 110000 "bench.sh" || true

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
exec java -Xms1g -Xmx4g -XX:+UseParallelGC -jar target/bench.jar "${args[@]}"
