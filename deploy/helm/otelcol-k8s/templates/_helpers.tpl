{{/* Names: the release name when it already says otelcol-k8s, else "<release>-otelcol-k8s". */}}
{{- define "otelcol-k8s.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "otelcol-k8s.node" -}}{{ include "otelcol-k8s.fullname" . }}-node{{- end -}}
{{- define "otelcol-k8s.events" -}}{{ include "otelcol-k8s.fullname" . }}-events{{- end -}}

{{/*
The events collector's Leases and kube_events' checkpoint ConfigMap: named after the release, so
two releases in one namespace never share them. kube_events keeps its checkpoint in the
ConfigMap "<lease name>-checkpoint".
*/}}
{{- define "otelcol-k8s.eventsLease" -}}{{ include "otelcol-k8s.fullname" . }}-events{{- end -}}
{{- define "otelcol-k8s.eventsCheckpoint" -}}{{ include "otelcol-k8s.eventsLease" . }}-checkpoint{{- end -}}

{{/* Labels of every object; "otelcol-k8s.labels" (dict "ctx" $ "name" NAME). */}}
{{- define "otelcol-k8s.labels" -}}
app.kubernetes.io/name: {{ .name }}
app.kubernetes.io/part-of: otelcol-k8s
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
{{- end -}}

{{- define "otelcol-k8s.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "otelcol-k8s.clusterName" -}}
{{ required "clusterName is required: it names this cluster's log groups" .Values.clusterName }}
{{- end -}}

{{/* Exporter settings that only some values turn on (each one needs its IAM action). */}}
{{- define "otelcol-k8s.groupSettings" -}}
{{- with .Values.logGroups.kmsKeyArn }}
kms_key_id: {{ . }}
{{- end }}
{{- with .Values.logGroups.tags }}
tags:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- if or .Values.logGroups.retentionDays .Values.logGroups.kmsKeyArn .Values.logGroups.tags }}
# Groups written before these settings changed (an earlier install, another version) get them
# too: one DescribeLogGroups per group and process start, then only the calls that differ.
apply_settings_to_existing_groups: true
{{- end }}
{{- end -}}

{{/* The collector's own metrics: a Prometheus endpoint on the pod's "metrics" port. */}}
{{/*
The node agent's service.name: its build's command, as the collector's own telemetry names
itself (node.build node: otelcol-k8s-node; full: otelcol-k8s).
*/}}
{{- define "otelcol-k8s.nodeServiceName" -}}
{{- if eq (.Values.node.build | default "node") "node" }}otelcol-k8s-node{{ else }}otelcol-k8s{{ end -}}
{{- end -}}

{{- define "otelcol-k8s.telemetry" -}}
metrics:
  level: {{ .ctx.Values.metrics.level }}
  readers:
    - pull:
        exporter:
          prometheus:
            host: {{ include "otelcol-k8s.listenHost" .ctx }}
            port: {{ include "otelcol-k8s.metricsPort" . }}
{{- end -}}

{{/*
Where a workload listens: every interface on a Pod network, only 127.0.0.1 in the node's
network (hostNetwork.enabled), where the node's other addresses must not be used.
*/}}
{{- define "otelcol-k8s.listenHost" -}}
{{- if .Values.hostNetwork.enabled }}127.0.0.1{{ else }}0.0.0.0{{ end -}}
{{- end -}}

{{/*
The health and metrics ports of a workload: (dict "ctx" $ "workload" "node"|"events"). In the
node's network the events workload takes its own ports, so that both fit on one node.
*/}}
{{- define "otelcol-k8s.healthPort" -}}
{{- if and .ctx.Values.hostNetwork.enabled (eq .workload "events") }}{{ .ctx.Values.hostNetwork.eventsHealthPort }}{{ else }}13133{{ end -}}
{{- end -}}
{{- define "otelcol-k8s.metricsPort" -}}
{{- if and .ctx.Values.hostNetwork.enabled (eq .workload "events") }}{{ .ctx.Values.hostNetwork.eventsMetricsPort }}{{ else }}{{ .ctx.Values.metrics.port }}{{ end -}}
{{- end -}}

{{/*
The Pod spec lines of the network: hostNetwork and its DNS policy.
*/}}
{{- define "otelcol-k8s.podNetwork" -}}
{{- if .Values.hostNetwork.enabled }}
hostNetwork: true
dnsPolicy: ClusterFirstWithHostNet
{{- end }}
{{- end -}}

{{/*
KUBERNETES_SERVICE_HOST/PORT when apiServer names them.
*/}}
{{- define "otelcol-k8s.apiServerEnv" -}}
{{- with .Values.apiServer.host }}
- name: KUBERNETES_SERVICE_HOST
  value: {{ . | quote }}
{{- end }}
{{- with .Values.apiServer.port }}
- name: KUBERNETES_SERVICE_PORT
  value: {{ . | quote }}
{{- end }}
{{- end -}}

{{/*
The collector configuration of a workload: "otelcol-k8s.config" (dict "ctx" $ "file" PATH
"extra" MAP). The file is rendered as a template; extra configuration, when given, is merged
over it (the result is then re-serialized, without the file's comments).
*/}}
{{- define "otelcol-k8s.config" -}}
{{- $text := tpl (.ctx.Files.Get .file) .ctx -}}
{{- if .extra -}}
{{- $merged := mustMergeOverwrite (fromYaml $text) (deepCopy .extra) -}}
{{- toYaml $merged -}}
{{- else -}}
{{- $text -}}
{{- end -}}
{{- end -}}

{{/*
GOMEMLIMIT: percent of the container's memory limit, in MiB ("512Mi", "1Gi", "1G", "600M" or
bytes); "otelcol-k8s.gomemlimit" (dict "limit" LIMIT "percent" PERCENT).
*/}}
{{- define "otelcol-k8s.gomemlimit" -}}
{{- $l := toString .limit -}}
{{- $units := dict "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 "K" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 "" 1 -}}
{{- $num := regexFind "^[0-9]+" $l -}}
{{- $unit := trimPrefix $num $l -}}
{{- if or (not $num) (not (hasKey $units $unit)) -}}
{{- fail (printf "memory limit %q: use an integer with Ki, Mi, Gi, Ti, K, M, G, T or no suffix" $l) -}}
{{- end -}}
{{- $bytes := mul (atoi $num) (get $units $unit) -}}
{{- printf "%dMiB" (div (mul $bytes .percent) 104857600) -}}
{{- end -}}

{{/* Probes on the health_check extension; the startup probe holds the others back. */}}
{{- define "otelcol-k8s.probes" -}}
{{- $get := dict "path" "/" "port" "health" }}
{{- if .Values.hostNetwork.enabled }}{{ $_ := set $get "host" "127.0.0.1" }}{{ end -}}
startupProbe:
  httpGet:
    {{- toYaml $get | nindent 4 }}
  periodSeconds: {{ .Values.startupProbe.periodSeconds }}
  failureThreshold: {{ .Values.startupProbe.failureThreshold }}
livenessProbe:
  httpGet:
    {{- toYaml $get | nindent 4 }}
  periodSeconds: 10
readinessProbe:
  httpGet:
    {{- toYaml $get | nindent 4 }}
  periodSeconds: 5
{{- end -}}

{{- define "otelcol-k8s.awsEnv" -}}
- name: AWS_REGION
  value: {{ required "aws.region is required" .Values.aws.region | quote }}
- name: CLUSTER_NAME
  value: {{ include "otelcol-k8s.clusterName" . | quote }}
{{- end -}}

{{- define "otelcol-k8s.envFrom" -}}
{{- with .Values.aws.existingSecret }}
envFrom:
  - secretRef:
      name: {{ . }}
{{- end }}
{{- end -}}

{{- define "otelcol-k8s.serviceAccountAnnotations" -}}
{{- $a := deepCopy (.sa.annotations | default dict) -}}
{{- with .roleArn }}{{ $_ := set $a "eks.amazonaws.com/role-arn" . }}{{ end -}}
{{- with $a }}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
X-Ray's OTLP endpoint (without the /v1/traces path): traces.endpoint or the Region's own.
*/}}
{{- define "otelcol-k8s.xrayEndpoint" -}}
{{- .Values.traces.endpoint | default "https://xray.${env:AWS_REGION}.amazonaws.com" | trimSuffix "/" -}}
{{- end -}}

{{/* The sampling block kube_lifecycle (sampling:) and kube_events (spans.sampling:) read:
     the same decision in both, by trace id. */}}
{{- define "otelcol-k8s.traceSampling" -}}
ratio: {{ .Values.traces.sampling.ratio }}
only_with_context: {{ .Values.traces.sampling.onlyWithContext }}
{{- with .Values.traces.sampling.kinds }}
kinds:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
