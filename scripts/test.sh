#!/usr/bin/env bash
# The test command: installs what is missing, then runs the whole Maven build with tests.
#
# Usage: scripts/test.sh [extra mvn arguments, e.g. -pl testkit -am, -Dtest=..., -DskipITs]
#
# Tests start their own Postgres, nats-server and binaries through the testkit on free ports;
# this script does not start the local stack (scripts/stack.sh up).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

"$ROOT/scripts/stack.sh" install

# Many sockets and child processes per test JVM: raise the open-file limit as far as allowed.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || ulimit -n 65536 2>/dev/null || true
echo "test.sh: open files limit $(ulimit -n)" >&2

# The build targets --release 21; Maven itself must run on a JDK >= 21 (Temurin 25 here).
if [ -x /usr/lib/jvm/temurin-25-jdk-amd64/bin/javac ]; then
  export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
fi
echo "test.sh: JAVA_HOME=${JAVA_HOME:-<unset>}" >&2

exec mvn -B verify "$@"
