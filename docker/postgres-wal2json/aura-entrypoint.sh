#!/usr/bin/env bash
# Entrypoint of the postgres-wal2json image: works out the logical-decoding settings for *this*
# server binary (install-wal2json.sh configure, which asks `postgres --describe-config` whether
# output_plugin_libraries exists: newer minor releases load only listed output plugins, older
# ones refuse to start when the setting is present), then hands over to the official
# docker-entrypoint.sh with them as -c settings. Nothing is written to the image or PGDATA, so
# it works with a read-only root filesystem (needs a writable TMPDIR) and on data directories
# initialised elsewhere. Arguments after ours win: `-c max_slot_wal_keep_size=4GB` overrides.
set -euo pipefail

postgres_bin="/usr/lib/postgresql/${PG_MAJOR}/bin/postgres"

if [ "${1:-postgres}" = "postgres" ] || [ "${1:0:1}" = "-" ]; then
  [ "${1:-}" = "postgres" ] && shift
  conf="$(mktemp "${TMPDIR:-/tmp}/aura-wal2json.XXXXXX.conf")"
  trap 'rm -f "$conf"' EXIT
  install-wal2json.sh configure "$conf" "$postgres_bin" >&2
  settings=()
  # Lines look like: name = value   or   name = 'quoted value'; skip markers and comments.
  while IFS= read -r line; do
    case "$line" in ''|'#'*) continue ;; esac
    name="${line%%=*}"; value="${line#*=}"
    name="${name//[[:space:]]/}"
    value="${value#"${value%%[![:space:]]*}"}"; value="${value%"${value##*[![:space:]]}"}"
    value="${value#\'}"; value="${value%\'}"
    settings+=(-c "${name}=${value}")
  done <"$conf"
  rm -f "$conf"
  trap - EXIT
  echo "aura-entrypoint: postgres ${settings[*]} $*" >&2
  exec docker-entrypoint.sh postgres "${settings[@]}" "$@"
fi

# Anything else (bash, psql, pg_dump ...) runs as given.
exec docker-entrypoint.sh "$@"
