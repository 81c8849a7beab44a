{{/* The release's base name: <release>-celer, or the release alone when it already says celer. */}}
{{- define "celer.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 52 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "celer.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels on every object. */}}
{{- define "celer.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "celer.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: celer
{{- end -}}

{{/* Selector labels of one role: include with (dict "ctx" $ "role" "admission"). */}}
{{- define "celer.selectorLabels" -}}
app.kubernetes.io/name: {{ include "celer.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .role }}
{{- end -}}

{{- define "celer.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{- define "celer.tlsSecret" -}}
{{- default (printf "%s-tls" (include "celer.fullname" .)) .Values.tls.secretName -}}
{{- end -}}

{{- define "celer.leaseName" -}}
{{- printf "%s-controller" (include "celer.fullname" .) -}}
{{- end -}}

{{- define "celer.tokenSecret" -}}
{{- printf "%s-admission-reports" (include "celer.fullname" .) -}}
{{- end -}}

{{/* The ClusterRole whose deletion (helm uninstall, kubectl delete) takes with it, through
     garbage collection, the webhook configurations and the Secret celer made at run time. */}}
{{- define "celer.ownerRole" -}}
{{- printf "%s-admission" (include "celer.fullname" .) -}}
{{- end -}}

{{/* Namespaces no webhook and no scan touches: the configured ones and the release's own. */}}
{{- define "celer.excludedNamespaces" -}}
{{- $list := concat .list (list .ctx.Release.Namespace) | uniq -}}
{{- join "," $list -}}
{{- end -}}

{{/* The restricted Pod Security profile, and a read-only root filesystem. */}}
{{- define "celer.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
fsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "celer.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
privileged: false
capabilities:
  drop: [ALL]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* Policy sources, the same for both roles. */}}
{{- define "celer.policyArgs" -}}
{{- if .Values.policies.fromCluster }}
- --policies-from-cluster
{{- end }}
{{- if .Values.policies.configMaps }}
- --policy-configmaps={{ .Values.policies.configMaps }}
{{- if ne .Values.policies.configMapsNamespace "*" }}
- --policy-configmaps-namespace={{ default .Release.Namespace .Values.policies.configMapsNamespace }}
{{- end }}
{{- end }}
{{- if .Values.policies.files }}
- --policies=/etc/celer/policies
{{- end }}
{{- end -}}

{{/*
What Kyverno's context functions may read and call: the same for the admission replicas and
the controller's scans, so a policy reads the cluster alike in both.
*/}}
{{- define "celer.contextArgs" -}}
{{- if .Values.admission.contextAllowSecrets }}
- --context-allow-secrets
{{- end }}
{{- with .Values.admission.httpAllow }}
- --http-allow={{ join "," . }}
{{- end }}
{{- if .Values.admission.imagePullSecrets }}
- --image-pull-secrets={{ range $i, $name := .Values.admission.imagePullSecrets }}{{ if $i }},{{ end }}{{ $.Release.Namespace }}/{{ $name }}{{ end }}
{{- end }}
{{- with .Values.admission.registryInsecure }}
- --registry-insecure={{ join "," . }}
{{- end }}
{{- end }}
