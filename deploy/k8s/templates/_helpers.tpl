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
{{- printf "nats://%s:4222" ($natsName | trunc 63 | trimSuffix "-") }}
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
