#!/usr/bin/env bash
# Docker HEALTHCHECK of the service images (Kubernetes uses its own probes instead).
set -euo pipefail
port="${CDC_HTTP_PORT:-${WS_PORT:-${AURA_IMAGE_DEFAULT_PORT:?}}}"
exec 3<>"/dev/tcp/127.0.0.1/${port}"
printf 'GET /health HTTP/1.0\r\nHost: localhost\r\n\r\n' >&3
IFS= read -r status <&3
[[ "$status" == *" 200 "* ]]
