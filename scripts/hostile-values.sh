#!/usr/bin/env bash
# The long run of the generated hostile-value test (issue 36, docs/design.md C13; not part of
# scripts/test.sh, which runs HostileValuesE2EIT's sized run of 100 cases).
#
# Usage: scripts/hostile-values.sh [--cases N] [--seed S]
#   defaults: 1,000 cases (about 15-25 minutes here), a fresh seed (printed; --seed replays a run)
#
# Starts Postgres, nats-server, the cdc-worker and ws-front jars through the testkit and drives the
# real realtime-js: every case is a hostile value, message, name or filter of project A; after each,
# project B's next row must arrive within 2 s, cdc_active must stay true, the slot must confirm past
# the case, and A's subscriber must receive the change or its error. Prints the case count, the
# seed and the longest case.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

CASES=1000
SEED=""
while [ $# -gt 0 ]; do
  case "$1" in
    --cases) CASES="$2"; shift 2 ;;
    --seed) SEED="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done

"$ROOT/scripts/stack.sh" install
if [ -x /usr/lib/jvm/temurin-25-jdk-amd64/bin/javac ]; then
  export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
fi

ARGS=(-B verify -pl e2e -am -Dtest=HostileValuesE2EIT -Dsurefire.failIfNoSpecifiedTests=false
      -Daura.hostile.cases="$CASES" -Dsurefire.timeout=$(( CASES * 10 + 600 )))
if [ -n "$SEED" ]; then
  ARGS+=(-Daura.hostile.seed="$SEED")
fi
exec mvn "${ARGS[@]}"
