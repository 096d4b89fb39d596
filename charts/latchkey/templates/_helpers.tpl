{{/* Chart name, truncated to the 63 characters of a label value. */}}
{{- define "latchkey.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Full name prefix of every namespaced object. */}}
{{- define "latchkey.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Prefix of cluster-scoped objects (ClusterRoles, ClusterRoleBindings): unique per release namespace too. */}}
{{- define "latchkey.clusterName" -}}
{{- printf "%s-%s" .Release.Namespace (include "latchkey.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "latchkey.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels that select the pods. Never change them: a Deployment's selector is immutable. */}}
{{- define "latchkey.selectorLabels" -}}
app.kubernetes.io/name: {{ include "latchkey.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/*
Labels that select one component's pods (dict "root" . "component" "controller"|"server"): each
Deployment, its PodDisruptionBudget and its Service select their own pods (the <release> Service
the servers, the <release>-controller Service the controllers).
*/}}
{{- define "latchkey.componentSelectorLabels" -}}
{{ include "latchkey.selectorLabels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "latchkey.labels" -}}
helm.sh/chart: {{ include "latchkey.chart" . }}
{{ include "latchkey.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: latchkey
{{- end -}}

{{- define "latchkey.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "latchkey.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "latchkey.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* The address end users' browsers reach (LATCHKEY_PUBLIC_BASE_URL). */}}
{{- define "latchkey.publicBaseUrl" -}}
{{- if .Values.config.publicBaseUrl -}}
{{- .Values.config.publicBaseUrl | trimSuffix "/" -}}
{{- else if and .Values.ingress.enabled .Values.ingress.hosts -}}
{{- $host := first .Values.ingress.hosts -}}
{{- $tls := false -}}
{{- range .Values.ingress.tls -}}
{{- if has $host (.hosts | default list) -}}{{- $tls = true -}}{{- end -}}
{{- end -}}
{{- printf "%s://%s" (ternary "https" "http" $tls) $host -}}
{{- else -}}
{{- printf "http://localhost:%d" (int .Values.server.port) -}}
{{- end -}}
{{- end -}}

{{/* Namespaces watched, comma-separated (empty: all). */}}
{{- define "latchkey.watchNamespaces" -}}
{{- join "," .Values.rbac.namespaces -}}
{{- end -}}

{{/* Where CredentialBindings are watched and their Secrets written (empty: every namespace). */}}
{{- define "latchkey.bindingNamespaces" -}}
{{- join "," (.Values.credentialBindings.namespaces | default .Values.rbac.namespaces) -}}
{{- end -}}

{{/* Probe timing fields from values. */}}
{{- define "latchkey.probeTiming" -}}
{{- range $k := list "initialDelaySeconds" "periodSeconds" "timeoutSeconds" "failureThreshold" "successThreshold" }}
{{- if hasKey $ $k }}
{{ $k }}: {{ index $ $k }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
Catalog documents: a list of {name, text} for every Provider document in catalog/*.yaml
that passes catalog.include / catalog.exclude. Returned as YAML (include returns strings).
*/}}
{{- define "latchkey.catalogDocs" -}}
{{- $docs := list -}}
{{- range $path, $_ := .Files.Glob "catalog/*.yaml" -}}
{{- range $raw := regexSplit "(?m)^---[ \t]*$" ($.Files.Get $path) -1 -}}
{{- $obj := fromYaml $raw -}}
{{- if and $obj (hasKey $obj "kind") -}}
{{- if ne $obj.kind "Provider" -}}
{{- fail (printf "%s: the catalog holds only Provider objects, found %s" $path $obj.kind) -}}
{{- end -}}
{{- $name := $obj.metadata.name -}}
{{- $in := or (empty $.Values.catalog.include) (has $name $.Values.catalog.include) -}}
{{- if and $in (not (has $name $.Values.catalog.exclude)) -}}
{{- $docs = append $docs (dict "name" $name "path" $path "text" (trim $raw)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- toYaml (dict "docs" $docs) -}}
{{- end -}}

{{/* Settings shared by both processes (see values.yaml `config` for each). */}}
{{- define "latchkey.env" -}}
- name: LATCHKEY_HTTP_PORT
  value: {{ .Values.server.port | quote }}
- name: LATCHKEY_CONTROLLER_PORT
  value: {{ .Values.controller.port | quote }}
- name: LATCHKEY_PUBLIC_BASE_URL
  value: {{ include "latchkey.publicBaseUrl" . | quote }}
- name: LATCHKEY_LOG_LEVEL
  value: {{ .Values.config.logLevel | quote }}
- name: LATCHKEY_WATCH_NAMESPACES
  value: {{ include "latchkey.watchNamespaces" . | quote }}
- name: LATCHKEY_CREDENTIAL_BINDINGS
  value: {{ .Values.credentialBindings.enabled | quote }}
- name: LATCHKEY_BINDING_NAMESPACES
  value: {{ include "latchkey.bindingNamespaces" . | quote }}
- name: LATCHKEY_REFRESH_MARGIN_SECONDS
  value: {{ .Values.config.refreshMarginSeconds | quote }}
- name: LATCHKEY_REFRESH_MARGIN_RATIO
  value: {{ .Values.config.refreshMarginRatio | quote }}
- name: LATCHKEY_REFRESH_FLOOR_SECONDS
  value: {{ .Values.config.refreshFloorSeconds | quote }}
- name: LATCHKEY_LEADER_ELECTION
  value: {{ .Values.config.leaderElection.enabled | quote }}
- name: LATCHKEY_LEASE_NAME
  value: {{ .Values.config.leaderElection.leaseName | quote }}
- name: LATCHKEY_LEASE_DURATION_SECONDS
  value: {{ .Values.config.leaderElection.leaseDurationSeconds | quote }}
- name: LATCHKEY_SESSION_TTL_SECONDS
  value: {{ .Values.config.sessionTtlSeconds | quote }}
- name: LATCHKEY_SERVICE_ACCOUNT_AUDIENCE
  value: {{ .Values.config.workloads.audience | quote }}
- name: LATCHKEY_TOKEN_REVIEW_TTL_SECONDS
  value: {{ .Values.config.workloads.tokenReviewTtlSeconds | quote }}
- name: LATCHKEY_ACCESS_REVIEW_TTL_SECONDS
  value: {{ .Values.config.workloads.accessReviewTtlSeconds | quote }}
- name: LATCHKEY_REVIEW_CACHE_ENTRIES
  value: {{ .Values.config.workloads.reviewCacheEntries | int | quote }}
- name: LATCHKEY_CONNECT_MAX_CONNECTIONS_PER_SESSION
  value: {{ .Values.config.limits.maxConnectionsPerSession | quote }}
- name: LATCHKEY_CONNECT_API_RATE_PER_SESSION
  value: {{ .Values.config.limits.connectApiRatePerSession | quote }}
- name: LATCHKEY_CONNECT_API_RATE_PER_NAMESPACE
  value: {{ .Values.config.limits.connectApiRatePerNamespace | quote }}
- name: LATCHKEY_SESSION_CREATE_RATE_PER_NAMESPACE
  value: {{ .Values.config.limits.sessionCreateRatePerNamespace | quote }}
- name: LATCHKEY_PROVIDER_WEBHOOK_RATE_PER_INTEGRATION
  value: {{ .Values.config.limits.providerWebhookRatePerIntegration | quote }}
- name: LATCHKEY_WEBHOOK_MAX_ATTEMPTS
  value: {{ .Values.config.webhooks.maxAttempts | quote }}
- name: LATCHKEY_WEBHOOK_RETRY_HOURS
  value: {{ .Values.config.webhooks.retryHours | quote }}
- name: LATCHKEY_WEBHOOK_BACKOFF_BASE_SECONDS
  value: {{ .Values.config.webhooks.backoffBaseSeconds | quote }}
- name: LATCHKEY_WEBHOOK_BACKOFF_MAX_SECONDS
  value: {{ .Values.config.webhooks.backoffMaxSeconds | quote }}
- name: LATCHKEY_EGRESS_ALLOW
  value: {{ join "," .Values.config.egress.allow | quote }}
- name: LATCHKEY_OPLOG_KEEP_ENTRIES
  value: {{ .Values.config.operationLog.keepEntries | quote }}
- name: LATCHKEY_OPLOG_KEEP_DAYS
  value: {{ .Values.config.operationLog.keepDays | quote }}
- name: LATCHKEY_OPLOG_MAX_ENTRIES
  value: {{ .Values.config.operationLog.maxEntries | quote }}
- name: LATCHKEY_OPLOG_ENVIRONMENT_ENTRIES
  value: {{ .Values.config.operationLog.environmentEntries | quote }}
- name: LATCHKEY_LAST_FETCHED_INTERVAL_SECONDS
  value: {{ .Values.config.lastFetchedIntervalSeconds | quote }}
- name: LATCHKEY_RESYNC_SECONDS
  value: {{ .Values.config.resyncSeconds | quote }}
- name: LATCHKEY_REFRESH_CONCURRENCY
  value: {{ .Values.config.refreshConcurrency | quote }}
{{- /* Read by the server alone (a stopping server keeps serving while the Service drops the pod); set in both, like every setting here. */}}
- name: LATCHKEY_SHUTDOWN_DELAY_SECONDS
  value: {{ .Values.server.shutdownDelaySeconds | quote }}
{{- /* Read by a process without a controller (the server); the controller caches its whole share. */}}
- name: LATCHKEY_CONNECTION_CACHE_ENTRIES
  value: {{ .Values.server.connectionCache.maxEntries | int | quote }}
{{- end -}}

{{/*
Stops the install before anything is created when a namespace the chart puts a Role in does not
exist (rbac.namespaces, rbac.clusterEventsNamespace; the release namespace is made by
--create-namespace): otherwise Helm failed halfway on `namespaces "x" not found`, leaving a failed
release with running pods. Only where Helm reads the cluster (install, upgrade, --dry-run=server):
`helm template` and `helm lint` have no cluster, and lookup answers nothing there, not even kube-system.
*/}}
{{- define "latchkey.requireNamespaces" -}}
{{- if and .Values.rbac.namespaces (lookup "v1" "Namespace" "" "kube-system") }}
{{- $wanted := concat .Values.rbac.namespaces (compact (list .Values.rbac.clusterEventsNamespace)) }}
{{- range $ns := $wanted | uniq }}
{{- if and (ne $ns $.Release.Namespace) (not (lookup "v1" "Namespace" "" $ns)) }}
{{- fail (printf "namespace %q (in rbac.namespaces or rbac.clusterEventsNamespace) does not exist: create it first (kubectl create namespace %s), then install again" $ns $ns) }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}
