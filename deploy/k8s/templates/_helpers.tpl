{{/* Chart name, truncated to a DNS label. */}}
{{- define "aura.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Release-qualified name; kept short because per-source suffixes are added to it. */}}
{{- define "aura.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "aura.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "aura.labels" -}}
helm.sh/chart: {{ include "aura.chart" . }}
app.kubernetes.io/name: {{ include "aura.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: aura-realtime
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Selector labels of one component: (dict "ctx" $ "component" "ws-front") */}}
{{- define "aura.selectorLabels" -}}
app.kubernetes.io/name: {{ include "aura.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "aura.image" -}}
{{- printf "%s:%s" .image.repository (toString (default .ctx.Chart.AppVersion .image.tag)) }}
{{- end }}

{{- define "aura.secretName" -}}
{{- default (include "aura.fullname" .) .Values.secrets.existingSecret }}
{{- end }}

{{- define "aura.postgres.fullname" -}}
{{- printf "%s-postgres" (include "aura.fullname" .) }}
{{- end }}

{{- define "aura.cdc.serviceAccountName" -}}
{{- if .Values.cdcWorker.serviceAccount.create }}
{{- default (printf "%s-cdc-worker" (include "aura.fullname" .)) .Values.cdcWorker.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.cdcWorker.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
NATS URL: the service of the NATS subchart (its fullname rule: release name, or
<release>-nats, or nats.fullnameOverride), else externalNats.url.
*/}}
{{- define "aura.natsUrl" -}}
{{- if .Values.nats.enabled }}
{{- $natsName := "" }}
{{- if .Values.nats.fullnameOverride }}
{{- $natsName = .Values.nats.fullnameOverride }}
{{- else }}
{{- $n := default "nats" .Values.nats.nameOverride }}
{{- if contains $n .Release.Name }}
{{- $natsName = .Release.Name }}
{{- else }}
{{- $natsName = printf "%s-%s" .Release.Name $n }}
{{- end }}
{{- end }}
{{- printf "%s://%s:4222" (ternary "tls" "nats" .Values.natsTls.enabled) ($natsName | trunc 63 | trimSuffix "-") }}
{{- else }}
{{- required "externalNats.url is required when nats.enabled=false" .Values.externalNats.url }}
{{- end }}
{{- end }}

{{/* Name suffix of a CDC source, validated as a DNS label. */}}
{{- define "aura.cdc.sourceName" -}}
{{- if not (regexMatch "^[a-z0-9]([-a-z0-9]{0,18}[a-z0-9])?$" .name) }}
{{- fail (printf "cdcWorker.sources[].name %q must be a DNS label of at most 20 characters" .name) }}
{{- end }}
{{- .name }}
{{- end }}

{{/* Secret holding POSTGRES_REPLICATION_URL / POSTGRES_URL of a source: (dict "ctx" $ "src" $src) */}}
{{- define "aura.cdc.dbSecretName" -}}
{{- if .src.existingSecret }}
{{- .src.existingSecret }}
{{- else if or .src.replicationUrl .src.url }}
{{- printf "%s-cdc-%s-db" (include "aura.fullname" .ctx) .src.name }}
{{- else }}
{{- include "aura.secretName" .ctx }}
{{- end }}
{{- end }}

{{/* Pod-level spread of one component over zones and nodes, unless the user gave constraints. */}}
{{- define "aura.topologySpread" -}}
{{- if .constraints }}
{{- toYaml .constraints }}
{{- else }}
- maxSkew: 1
  topologyKey: topology.kubernetes.io/zone
  whenUnsatisfiable: ScheduleAnyway
  labelSelector:
    matchLabels:
      {{- .selector | nindent 6 }}
- maxSkew: 1
  topologyKey: kubernetes.io/hostname
  whenUnsatisfiable: ScheduleAnyway
  labelSelector:
    matchLabels:
      {{- .selector | nindent 6 }}
{{- end }}
{{- end }}

{{/*
Fails when extra env repeats a variable the chart already sets (a duplicate name in a pod spec
is silently resolved by the last entry): (dict "env" .Values.x.env "managed" (list ...) "where" "cdcWorker.env")
*/}}
{{- define "aura.checkExtraEnv" -}}
{{- range .env }}
{{- if has .name $.managed }}
{{- fail (printf "%s: %s is set by the chart; use its value key instead" $.where .name) }}
{{- end }}
{{- end }}
{{- end }}

{{/* Name of the bundled NATS's auth Secret and permissions ConfigMap: the NATS subchart's values
name them from the release name alone ({{ .Release.Name }}-aura-nats), so this must too. */}}
{{- define "aura.natsAuthName" -}}
{{- printf "%s-aura-nats" .Release.Name }}
{{- end }}

{{/* Fails on a NATS authentication setting the chart cannot honour. */}}
{{- define "aura.checkNatsAuth" -}}
{{- $mode := .Values.natsAuth.mode }}
{{- if not (has $mode (list "password" "nkey" "creds" "none")) }}
{{- fail (printf "natsAuth.mode %q must be password, nkey, creds or none" $mode) }}
{{- end }}
{{- if .Values.nats.enabled }}
{{- if ne $mode "password" }}
{{- fail (printf "natsAuth.mode %q: the bundled NATS (nats.enabled) supports password only" $mode) }}
{{- end }}
{{- else if ne $mode "none" }}
{{- range $c := list "cdcWorker" "wsFront" }}
{{- if not (get (get $.Values.natsAuth $c) "existingSecret") }}
{{- fail (printf "natsAuth.%s.existingSecret is required with an external NATS and natsAuth.mode %s (or set natsAuth.mode none for a NATS without authentication)" $c $mode) }}
{{- end }}
{{- end }}
{{- end }}
{{- if and .Values.natsTls.enabled (not .Values.natsTls.secretName) }}
{{- fail "natsTls.secretName is required when natsTls.enabled" }}
{{- end }}
{{- end }}

{{/*
NATS_* env entries of one binary: (dict "ctx" $ "component" "cdcWorker"|"wsFront" "user" "aura-cdc-worker"|"aura-ws-front" "key" "cdc-worker"|"ws-front")
*/}}
{{- define "aura.natsEnv" -}}
{{- $ctx := .ctx }}
{{- $auth := get $ctx.Values.natsAuth .component }}
{{- $mode := $ctx.Values.natsAuth.mode }}
- name: NATS_URL
  value: {{ include "aura.natsUrl" $ctx | quote }}
{{- if $ctx.Values.nats.enabled }}
- name: NATS_USER
  value: {{ .user | quote }}
- name: NATS_PASSWORD
  valueFrom:
    secretKeyRef: {name: {{ include "aura.natsAuthName" $ctx }}, key: {{ printf "%s-password" .key }}}
{{- else if eq $mode "password" }}
- name: NATS_USER
  valueFrom:
    secretKeyRef: {name: {{ $auth.existingSecret }}, key: NATS_USER}
- name: NATS_PASSWORD
  valueFrom:
    secretKeyRef: {name: {{ $auth.existingSecret }}, key: NATS_PASSWORD}
{{- else if eq $mode "nkey" }}
- name: NATS_NKEY_SEED_FILE
  value: /etc/aura/nats-auth/nkey.seed
{{- else if eq $mode "creds" }}
- name: NATS_CREDS_FILE
  value: /etc/aura/nats-auth/nats.creds
{{- end }}
{{- if $ctx.Values.natsTls.enabled }}
- name: NATS_TLS_CA_FILE
  value: /etc/aura/nats-tls/ca.crt
{{- if $ctx.Values.natsTls.clientCertificate }}
- name: NATS_TLS_CERT_FILE
  value: /etc/aura/nats-tls/tls.crt
- name: NATS_TLS_KEY_FILE
  value: /etc/aura/nats-tls/tls.key
{{- end }}
{{- end }}
- name: REGISTRY_BUCKET_MAX_BYTES
  value: {{ $ctx.Values.natsBuckets.registryMaxBytes | int64 | quote }}
{{- end }}

{{/* Volume mounts for NATS credential files and TLS: (dict "ctx" $) */}}
{{- define "aura.natsVolumeMounts" -}}
{{- if and (not .ctx.Values.nats.enabled) (has .ctx.Values.natsAuth.mode (list "nkey" "creds")) }}
- name: nats-auth
  mountPath: /etc/aura/nats-auth
  readOnly: true
{{- end }}
{{- if .ctx.Values.natsTls.enabled }}
- name: nats-tls
  mountPath: /etc/aura/nats-tls
  readOnly: true
{{- end }}
{{- end }}

{{/* Volumes for NATS credential files and TLS: (dict "ctx" $ "component" "cdcWorker"|"wsFront") */}}
{{- define "aura.natsVolumes" -}}
{{- if and (not .ctx.Values.nats.enabled) (has .ctx.Values.natsAuth.mode (list "nkey" "creds")) }}
- name: nats-auth
  secret:
    secretName: {{ (get .ctx.Values.natsAuth .component).existingSecret }}
    defaultMode: 0440
{{- end }}
{{- if .ctx.Values.natsTls.enabled }}
- name: nats-tls
  secret:
    secretName: {{ .ctx.Values.natsTls.secretName }}
    defaultMode: 0440
{{- end }}
{{- end }}

{{/*
Client JWT signing keys (docs/security.md, "Signing keys"): the legacy HS256 secret and the
JWKS from the Secret (key AURA_JWT_JWKS, optional), a JWKS URL and its refresh settings.
*/}}
{{- define "aura.jwtEnv" -}}
- name: AURA_JWT_SECRET
  valueFrom:
    secretKeyRef: {name: {{ include "aura.secretName" . }}, key: AURA_JWT_SECRET}
- name: AURA_JWT_JWKS
  valueFrom:
    # Optional: the public keys (JWKS JSON) that sign client tokens, beside the HS256 secret.
    secretKeyRef: {name: {{ include "aura.secretName" . }}, key: AURA_JWT_JWKS, optional: true}
- name: AURA_JWT_ACCEPT_HS256
  value: {{ .Values.jwt.acceptHs256 | quote }}
{{- with .Values.jwt.jwksUrl }}
- name: AURA_JWT_JWKS_URL
  value: {{ . | quote }}
{{- end }}
- name: AURA_JWT_JWKS_CACHE_SECONDS
  value: {{ .Values.jwt.jwksCacheSeconds | quote }}
- name: AURA_JWT_JWKS_MIN_REFRESH_SECONDS
  value: {{ .Values.jwt.jwksMinRefreshSeconds | quote }}
{{- end }}
