{{/* Chart name, truncated to the 63 characters of a DNS label. */}}
{{- define "errata.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name of the release's objects. */}}
{{- define "errata.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "errata.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels of every object. */}}
{{- define "errata.labels" -}}
helm.sh/chart: {{ include "errata.chart" . }}
{{ include "errata.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "errata.selectorLabels" -}}
app.kubernetes.io/name: {{ include "errata.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "errata.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "errata.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "errata.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* A secretKeyRef env entry: name, secret, key. */}}
{{- define "errata.secretEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ .secret | quote }}
      key: {{ .key | quote }}
{{- end }}

{{/*
Settings every Errata process reads. Secrets come from existing Secrets;
endpoints and options from values. Production logs are JSON.
*/}}
{{- define "errata.env" -}}
- name: ERRATA_KAFKA_BROKERS
  value: {{ required "kafka.brokers is required" .Values.kafka.brokers | quote }}
- name: ERRATA_KAFKA_TOPIC_PREFIX
  value: {{ .Values.kafka.topicPrefix | quote }}
- name: ERRATA_KAFKA_PARTITIONS
  value: {{ .Values.kafka.partitions | quote }}
- name: ERRATA_KAFKA_SESSION_TIMEOUT
  value: {{ .Values.kafka.sessionTimeout | quote }}
{{- $rf := int .Values.kafka.replicationFactor }}
{{- $isr := int .Values.kafka.minInsyncReplicas }}
{{- if or (lt $rf 0) (gt $rf 32767) }}
{{- fail (printf "kafka.replicationFactor %d: must be between 0 (the brokers' default) and 32767" $rf) }}
{{- end }}
{{- if lt $isr 1 }}
{{- fail (printf "kafka.minInsyncReplicas %d: must be at least 1" $isr) }}
{{- end }}
{{- if and (gt $rf 0) (gt $isr $rf) }}
{{- fail (printf "kafka.minInsyncReplicas %d exceeds kafka.replicationFactor %d: every append would fail" $isr $rf) }}
{{- end }}
- name: ERRATA_KAFKA_REPLICATION_FACTOR
  value: {{ $rf | quote }}
- name: ERRATA_KAFKA_MIN_INSYNC_REPLICAS
  value: {{ $isr | quote }}
{{ include "errata.secretEnv" (dict "name" "ERRATA_DATABASE_URL" "secret" (required "postgres.existingSecret is required" .Values.postgres.existingSecret) "key" .Values.postgres.urlKey) }}
- name: ERRATA_SERVING_SCHEMA
  value: {{ .Values.postgres.servingSchema | quote }}
{{- if .Values.elasticsearch.existingSecret }}
{{ include "errata.secretEnv" (dict "name" "ERRATA_ELASTICSEARCH_URL" "secret" .Values.elasticsearch.existingSecret "key" .Values.elasticsearch.urlKey) }}
{{- else if .Values.elasticsearch.url }}
- name: ERRATA_ELASTICSEARCH_URL
  value: {{ .Values.elasticsearch.url | quote }}
{{- end }}
{{- if .Values.clickhouse.existingSecret }}
{{ include "errata.secretEnv" (dict "name" "ERRATA_CLICKHOUSE_URL" "secret" .Values.clickhouse.existingSecret "key" .Values.clickhouse.urlKey) }}
{{- else if .Values.clickhouse.url }}
- name: ERRATA_CLICKHOUSE_URL
  value: {{ .Values.clickhouse.url | quote }}
{{- end }}
{{ include "errata.secretEnv" (dict "name" "ERRATA_HASH_SECRET" "secret" (required "secrets.hashSecret.name is required" .Values.secrets.hashSecret.name) "key" .Values.secrets.hashSecret.key) }}
{{- with .Values.secrets.openaiApiKey }}{{ if .name }}
{{ include "errata.secretEnv" (dict "name" "OPENAI_API_KEY" "secret" .name "key" .key) }}
{{- end }}{{ end }}
{{- with .Values.secrets.keystoreKeys }}{{ if .name }}
{{ include "errata.secretEnv" (dict "name" "ERRATA_KEYSTORE_KEYS" "secret" .name "key" .key) }}
{{- end }}{{ end }}
{{- with .Values.secrets.searchApiKey }}{{ if .name }}
{{ include "errata.secretEnv" (dict "name" "ERRATA_SEARCH_API_KEY" "secret" .name "key" .key) }}
{{- end }}{{ end }}
{{- with .Values.secrets.blobstoreS3 }}{{ if .name }}
{{ include "errata.secretEnv" (dict "name" "ERRATA_BLOBSTORE_S3_ACCESS_KEY_ID" "secret" .name "key" .accessKeyIdKey) }}
{{ include "errata.secretEnv" (dict "name" "ERRATA_BLOBSTORE_S3_SECRET_ACCESS_KEY" "secret" .name "key" .secretAccessKeyKey) }}
{{- end }}{{ end }}
- name: ERRATA_LLM_PROVIDER
  value: {{ .Values.llm.provider | quote }}
{{- if .Values.llm.baseUrl }}
- name: OPENAI_BASE_URL
  value: {{ .Values.llm.baseUrl | quote }}
{{- end }}
- name: ERRATA_INVESTIGATOR_MODEL
  value: {{ .Values.llm.investigatorModel | quote }}
- name: ERRATA_VALIDATOR_MODEL
  value: {{ .Values.llm.validatorModel | quote }}
{{- $policies := list "strict-v1" "validator-only-v1" }}
{{- if not (has .Values.evidence.policy $policies) }}
{{- fail (printf "evidence.policy %q is unknown (known: %s)" (toString .Values.evidence.policy) (join ", " $policies)) }}
{{- end }}
- name: ERRATA_EVIDENCE_POLICY
  value: {{ .Values.evidence.policy | quote }}
{{- if .Values.evidence.stanceModel }}
- name: ERRATA_STANCE_MODEL
  value: {{ .Values.evidence.stanceModel | quote }}
{{- end }}
{{- if .Values.llm.reasoningEffort }}
- name: ERRATA_REASONING_EFFORT
  value: {{ .Values.llm.reasoningEffort | quote }}
{{- end }}
{{- if .Values.llm.prices }}
- name: ERRATA_LLM_PRICES
  value: {{ .Values.llm.prices | quote }}
{{- end }}
- name: ERRATA_BLOBSTORE_URL
  value: {{ .Values.blobstore.url | quote }}
- name: ERRATA_LOG_FORMAT
  value: json
- name: ERRATA_LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
{{- range $name, $value := .Values.config }}
{{- if not (or (hasPrefix "ERRATA_" $name) (hasPrefix "OPENAI_" $name)) }}
{{- fail (printf "config.%s: only ERRATA_* and OPENAI_* settings belong in config (use extraEnv)" $name) }}
{{- end }}
- name: {{ $name }}
  value: {{ $value | toString | quote }}
{{- end }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Writable scratch space: the root filesystem is read-only. */}}
{{- define "errata.volumes" -}}
- name: tmp
  emptyDir: {}
{{- if hasPrefix "/" .Values.blobstore.url }}
- name: blobs
  emptyDir: {}
{{- end }}
{{- end }}

{{- define "errata.volumeMounts" -}}
- name: tmp
  mountPath: /tmp
{{- if hasPrefix "/" .Values.blobstore.url }}
- name: blobs
  mountPath: {{ .Values.blobstore.url }}
{{- end }}
{{- end }}

{{/*
The operator's source registry (evidence.sourceRegistry): a ConfigMap mounted
read-only into the workers, which run the evidence engine, named by
ERRATA_SOURCE_REGISTRY. Included only when the value is set.
*/}}
{{- define "errata.sourceRegistry.dir" -}}/etc/errata/source-registry{{- end }}
{{- define "errata.sourceRegistry.key" -}}sources.registry{{- end }}

{{- define "errata.sourceRegistry.env" -}}
- name: ERRATA_SOURCE_REGISTRY
  value: {{ printf "%s/%s" (include "errata.sourceRegistry.dir" .) (include "errata.sourceRegistry.key" .) | quote }}
{{- end }}

{{- define "errata.sourceRegistry.volume" -}}
- name: source-registry
  configMap:
    name: {{ include "errata.fullname" . }}-source-registry
{{- end }}

{{- define "errata.sourceRegistry.volumeMount" -}}
- name: source-registry
  mountPath: {{ include "errata.sourceRegistry.dir" . }}
  readOnly: true
{{- end }}

{{/* Pod-level settings shared by every workload. */}}
{{- define "errata.podSpec" -}}
serviceAccountName: {{ include "errata.serviceAccountName" . }}
automountServiceAccountToken: {{ .Values.serviceAccount.automountToken }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
