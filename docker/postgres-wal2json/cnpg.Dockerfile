# syntax=docker/dockerfile:1
# CloudNativePG-compatible Postgres 16 + wal2json, for projects on a dedicated CNPG cluster
# (each gets its own cdc-worker source in the Helm chart). Build context: docker/postgres-wal2json
#
#   docker build -f docker/postgres-wal2json/cnpg.Dockerfile -t postgres-wal2json:16-cnpg docker/postgres-wal2json
#
# CNPG owns postgresql.conf, so nothing is configured here: set the parameters in the Cluster
# (see docs/deployment-notes.md, "Dedicated clusters (CloudNativePG)"):
#   wal_level: logical, max_slot_wal_keep_size: "1GB", and output_plugin_libraries where the
#   server knows it (`postgres --describe-config | grep output_plugin_libraries` in this image).
ARG CNPG_IMAGE=ghcr.io/cloudnative-pg/postgresql:16-standard-bookworm
FROM ${CNPG_IMAGE}

ARG PG_MAJOR=16
ARG WAL2JSON_VERSION=2.6-4.pgdg12+1

USER root
COPY install-wal2json.sh /usr/local/bin/install-wal2json.sh
RUN set -eux; \
    chmod 0755 /usr/local/bin/install-wal2json.sh; \
    pkg="postgresql-${PG_MAJOR}-wal2json"; \
    printf 'Package: %s\nPin: version %s\nPin-Priority: 1001\n' "$pkg" "$WAL2JSON_VERSION" \
        > /etc/apt/preferences.d/wal2json; \
    apt-get update; \
    install-wal2json.sh install "$PG_MAJOR"; \
    installed="$(dpkg-query -W -f='${Version}' "$pkg")"; \
    [ "$installed" = "$WAL2JSON_VERSION" ] || { echo "expected $pkg=$WAL2JSON_VERSION, got $installed" >&2; exit 1; }; \
    apt-mark hold "$pkg"; \
    test -f "/usr/lib/postgresql/${PG_MAJOR}/lib/wal2json.so"; \
    rm -rf /var/lib/apt/lists/*
# CNPG runs Postgres as uid 26 and requires it.
USER 26
