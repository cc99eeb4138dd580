#!/usr/bin/env bash
# Load soak of issue 9 (not part of scripts/test.sh / CI).
#
# Usage: scripts/soak.sh [--minutes N] [--connections N] [--changes-per-second N] [--broadcasts-per-second N]
#   defaults: 10 minutes, 10,000 connections, 20 changes/s, 20 broadcasts/s
#
# Starts Postgres, nats-server, the cdc-worker and one ws-front jar through the testkit (SoakIT),
# opens the connections, and reports ws-front heap after GC over time, lost deliveries to
# connected clients and p50/p99 delivery latency. The result replaces the "Last soak result"
# section of docs/reliability.md.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

MINUTES=10
CONNECTIONS=10000
CHANGES=20
BROADCASTS=20
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) MINUTES="$2"; shift 2 ;;
    --connections) CONNECTIONS="$2"; shift 2 ;;
    --changes-per-second) CHANGES="$2"; shift 2 ;;
    --broadcasts-per-second) BROADCASTS="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done

# Each connection is one socket in the test JVM and one in ws-front: raise the limit for both.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if [ "$(ulimit -n)" -lt $((CONNECTIONS + 2000)) ]; then
  echo "soak.sh: open files limit $(ulimit -n) is too low for $CONNECTIONS connections (need $((CONNECTIONS + 2000)))" >&2
  exit 1
fi
echo "soak.sh: open files limit $(ulimit -n)" >&2

if [ -x /usr/lib/jvm/temurin-25-jdk-amd64/bin/javac ]; then
  export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
fi

mvn -B -q verify -pl e2e -am -Dtest=SoakIT -Dsurefire.failIfNoSpecifiedTests=false \
  -Dsoak.minutes="$MINUTES" -Dsoak.connections="$CONNECTIONS" \
  -Dsoak.changesPerSecond="$CHANGES" -Dsoak.broadcastsPerSecond="$BROADCASTS" \
  -Dsurefire.timeout=$(( ${MINUTES%.*} * 60 + 1200 )) && status=0 || status=$?

RESULT="$ROOT/e2e/target/soak-result.md"
if [ -f "$RESULT" ]; then
  python3 - "$ROOT/docs/reliability.md" "$RESULT" "$status" <<'PY'
import sys, re
doc, result, status = sys.argv[1], open(sys.argv[2]).read().strip(), sys.argv[3]
text = open(doc).read()
block = "<!-- soak:begin -->\n" + result + "\n\nExit status of the run: " + status + ".\n<!-- soak:end -->"
text = re.sub(r"<!-- soak:begin -->.*<!-- soak:end -->", lambda m: block, text, flags=re.S)
open(doc, "w").write(text)
PY
  echo "soak.sh: result written to docs/reliability.md" >&2
fi
exit "$status"
