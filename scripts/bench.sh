#!/usr/bin/env bash
# Runs the benchmarks of issue 8 (with issue 5's RLS figure, issue 18's CDC figures and issue 19's
# fan-out figures) on this machine: builds the jars, starts a throw-away Postgres (wal2json) and
# nats-server, runs the cdc-worker and ws-front jars, prints one table and writes
# docs/performance.md.
#
# Usage: scripts/bench.sh [--quick] [--cdc-only] [--latency-only] [--joins-only] [--matching-only] [--rls-only] [--dbcast-only]
#                         [--skip-build] [--out FILE] [--scale N] [--rounds N] [--profile] [--storm-clients N]
#                         [--reconnect-clients N] [--no-walsender-pause]
#   (no flag)     the full run, about 35 minutes on a quiet 2-core box (estimate from the sizes; the
#                 lead's runs say): figures 1 (CDC throughput: stream, poll and Debezium on warm
#                 processes, 100k-row backlogs), 4b (worker heap in a 1M-row txn), 2 (latency, stream
#                 and poll), 2b (latency beside a project with a 50 ms/row policy, issue 36), 27 (figures
#                 1 and 2 with postgres_changes resume off and on), 5 (RLS against the reference
#                 method), 7 (matching), 10 (Broadcast from Database), 3 (fan-out against raw NATS),
#                 4a/4c (memory; one run each), 6/8/8b/9 (joins and storms), every timed figure in 5
#                 alternating rounds.
#                 Every round records expected and received (counted from its own reader only), CPU
#                 and its slot's position; a round that did not complete, beat its ceiling or whose CPU
#                 per unit is > 2x off its siblings' is INVALID and fails its figure. A target is met
#                 only with >= 5 valid rounds and none invalid, when the median clears it by the
#                 rounds' MAD (issue 39). The report lists every round with its validity.
#   --quick       smaller backlogs, segments and bursts, figure 4c skipped (22.5 minutes measured at load 20): shows
#                 that every figure runs and roughly where it stands; its ratios are indicative only
#   --rounds N    rounds of each timed figure (default 5; fewer never meet a target)
#   --profile     a separate, profiled run: services record JFR and the report summarises the hot
#                 methods (timed runs never run a profiler; don't compare a profiled run's figures)
#   --cdc-only    figures 1, 2 and 2b only (throughput with the peer, latency); prints the table and
#                 writes a report only with --out (docs/performance.md is left alone)
#   --latency-only  figures 2 and 2b only; prints the table and writes a report only with --out
#   --no-walsender-pause  figure 1 without pausing a paused reader's walsender: shows what a
#                 SIGSTOPped reader's walsender decodes into its socket meanwhile (issue 39, finding 4;
#                 the note on paused readers says how much); not for the figures
#   --joins-only  the join figures only: 6 (private joins with a read policy) and 8
#                 (postgres_changes joins) against public joins, 32 in flight; 8b (a join storm
#                 through two replicas) and 9 (a reconnect storm after a replica is killed); prints
#                 the table and writes a report only with --out
#   --identity-only  figures 5 and 6 only (scripts/bench-identity.sh runs them before/after issue 22)
#   --matching-only  figure 7 only (changes/s with 10,001 bindings vs 1, same run); prints the
#                 table and writes a report only with --out
#   --resume-compare  issue 27's cost: figures 1 (single-row txns backlog) and 2 (1,000 rows/s)
#                 with postgres_changes resume off and on (the project's limits row switched between
#                 turns) on one warm worker and ws-front, --rounds alternating rounds; prints medians
#                 and the on/off ratios; writes a report only with --out
#   --rls-only    figure 5 only: batched RLS vs the reference method (walrus's shape), alternating rounds
#   --dbcast-only figure 10 only: Broadcast from Database to a private channel (realtime-js + Java
#                 subscribers) at 1,000 and 10,500 msg/s offered and as a backlog, vs plain table inserts
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
    -h|--help) sed -n '2,53p' "$0"; exit 0 ;;
    *) args+=("$a") ;;
  esac
done

# 100,000 connections (figure 4c) cost one descriptor each in ws-front and in the load generator:
# raise the open files limit; where it cannot reach that, figure 4c runs with fewer and says so.
source scripts/lib/limits.sh
raise_open_files 110000 "bench.sh" || true

if [ "$build" = 1 ]; then
  # package, not install: the jars are read from */target and ~/.m2 may be shared
  echo "== building (mvn -DskipTests package)"
  mvn -q -DskipTests package
  if [ ! -d e2e/js/node_modules ]; then
    echo "== npm ci --prefix e2e/js (realtime-js for the latency cross-check)"
    npm ci --prefix e2e/js --no-audit --no-fund --loglevel=error
  fi
fi

mkdir -p bench/target/bench-run
cd bench   # service logs land in bench/target/service-logs
exec java -Xms1g -Xmx4g -XX:+UseParallelGC -jar target/bench.jar "${args[@]}"
