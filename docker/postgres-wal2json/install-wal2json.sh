#!/usr/bin/env bash
# Installs the wal2json logical-decoding output plugin on Debian and writes the
# logical-decoding settings into a postgresql.conf. This is the single place that knows
# both; scripts/stack.sh, the testkit (PostgresServer) and the Docker image all call it.
#
# Usage:
#   install-wal2json.sh install [PG_MAJOR]
#       apt-get install postgresql-$PG_MAJOR-wal2json (PG_MAJOR: argument, else env, else 15).
#       Skips apt when the package is already installed.
#   install-wal2json.sh configure <postgresql.conf> <postgres binary>
#       Appends (once) wal_level=logical, max_replication_slots, max_wal_senders,
#       max_slot_wal_keep_size and, only when this server knows the GUC,
#       output_plugin_libraries (newer minor releases load only listed output plugins;
#       older ones refuse to start if the unknown setting is present).
#       Overridable through env: MAX_REPLICATION_SLOTS (10), MAX_WAL_SENDERS (10),
#       MAX_SLOT_WAL_KEEP_SIZE (1GB).
#
# Both subcommands are idempotent.
set -euo pipefail

readonly MARKER_BEGIN="# >>> aura-realtime logical decoding (install-wal2json.sh) >>>"
readonly MARKER_END="# <<< aura-realtime logical decoding <<<"

die() { echo "install-wal2json.sh: $*" >&2; exit 1; }

install_plugin() {
  local pg_major="${1:-${PG_MAJOR:-15}}"
  local pkg="postgresql-${pg_major}-wal2json"
  local status
  status="$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)"
  if [ "$status" = "install ok installed" ]; then
    echo "install-wal2json.sh: $pkg already installed"
    return 0
  fi
  command -v apt-get >/dev/null || die "apt-get not found; install $pkg with your package manager"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "$pkg"; then
    DEBIAN_FRONTEND=noninteractive $sudo apt-get update
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "$pkg"
  fi
}

# Prints the postgres --describe-config output; postgres refuses to run as root, so drop
# to the postgres OS user when needed.
describe_config() {
  local postgres_bin="$1"
  if [ "$(id -u)" -eq 0 ]; then
    if command -v runuser >/dev/null; then
      runuser -u postgres -- "$postgres_bin" --describe-config
    else
      su postgres -s /bin/sh -c "\"$postgres_bin\" --describe-config"
    fi
  else
    "$postgres_bin" --describe-config
  fi
}

configure() {
  local conf="${1:-}" postgres_bin="${2:-}"
  [ -n "$conf" ] && [ -n "$postgres_bin" ] || die "usage: configure <postgresql.conf> <postgres binary>"
  [ -f "$conf" ] || die "no such file: $conf"
  [ -x "$postgres_bin" ] || die "not executable: $postgres_bin"

  local knows_plugin_list=0
  local described
  described="$(describe_config "$postgres_bin")" || die "'$postgres_bin --describe-config' failed"
  if grep -q '^output_plugin_libraries[[:space:]]' <<<"$described"; then
    knows_plugin_list=1
  fi

  # Replace an earlier block so re-running picks up changed values instead of appending twice.
  if grep -qF "$MARKER_BEGIN" "$conf"; then
    local tmp
    tmp="$(mktemp "${conf}.XXXXXX")"
    awk -v b="$MARKER_BEGIN" -v e="$MARKER_END" '
      $0 == b { skipping = 1; next }
      $0 == e { skipping = 0; next }
      !skipping { print }' "$conf" >"$tmp"
    cat "$tmp" >"$conf"   # keep owner and mode of the original file
    rm -f "$tmp"
  fi

  {
    echo "$MARKER_BEGIN"
    echo "wal_level = logical"
    echo "max_replication_slots = ${MAX_REPLICATION_SLOTS:-10}"
    echo "max_wal_senders = ${MAX_WAL_SENDERS:-10}"
    echo "max_slot_wal_keep_size = '${MAX_SLOT_WAL_KEEP_SIZE:-1GB}'"
    if [ "$knows_plugin_list" -eq 1 ]; then
      echo "output_plugin_libraries = 'pgoutput, test_decoding, wal2json'"
    fi
    echo "$MARKER_END"
  } >>"$conf"
  echo "install-wal2json.sh: configured $conf (output_plugin_libraries: $([ "$knows_plugin_list" -eq 1 ] && echo set || echo 'not needed: this Postgres release loads any output plugin'))"
}

main() {
  local cmd="${1:-install}"
  shift || true
  case "$cmd" in
    install) install_plugin "$@" ;;
    configure) configure "$@" ;;
    -h|--help|help) sed -n '2,20p' "$0" ;;
    *) die "unknown subcommand '$cmd' (expected install or configure)" ;;
  esac
}

main "$@"
