#!/usr/bin/env bash
# Load soak of issues 9 and 19 (not part of scripts/test.sh / CI).
#
# Usage: scripts/soak.sh [--minutes N] [--connections N] [--changes-per-second N] [--broadcasts-per-second N]
#   defaults: 10 minutes, 10,000 connections, 20 changes/s, 20 broadcasts/s
#   large size (issue 19): scripts/soak.sh --minutes 5 --connections 100000
#
# Starts Postgres, nats-server, the cdc-worker and one ws-front jar through the testkit (SoakIT),
# opens the connections (bound to 127.0.0.2-9: one source address has ~28,000 ephemeral ports),
# and reports ws-front heap after GC over time, lost deliveries to connected clients, p50/p99
# delivery latency, and the time one broadcast takes to reach all connections. The result
# replaces the "Last soak result" section of docs/reliability.md.
#
# Each connection holds a descriptor in the test JVM and one in ws-front: the open files limit is
# raised to connections + 2,000 (the hard limit too where permitted: CAP_SYS_RESOURCE).
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
source "$ROOT/scripts/lib/limits.sh"
if ! raise_open_files $((CONNECTIONS + 2000)) "soak.sh"; then
  echo "soak.sh: $CONNECTIONS connections need an open files limit of $((CONNECTIONS + 2000)); at most $(( $(ulimit -n) - 2000 )) fit here" >&2
  exit 1
fi

if [ -x /usr/lib/jvm/temurin-25-jdk-amd64/bin/javac ]; then
  export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
fi

mvn -B -q verify -pl e2e -am -Dtest=SoakIT -Dsurefire.failIfNoSpecifiedTests=false \
  -Dsoak.minutes="$MINUTES" -Dsoak.connections="$CONNECTIONS" \
  -Dsoak.changesPerSecond="$CHANGES" -Dsoak.broadcastsPerSecond="$BROADCASTS" \
  -Dsurefire.timeout=$(( ${MINUTES%.*} * 60 + 1200 + CONNECTIONS / 100 )) && status=0 || status=$?

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
