{{/*
Names are fixed, as in deploy/: the manager finds its Services, Secrets and Leases by these
names, and the cluster-scoped roles and webhooks allow one installation per cluster.
*/}}

{{/* The labels of every object: the kustomize base's, then those Helm charts add by convention. */}}
{{- define "ptah-operator.labels" -}}
app.kubernetes.io/name: ptah-operator
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "ptah-operator.selectorLabels" -}}
app.kubernetes.io/name: ptah-operator
{{- end -}}

{{- define "ptah-operator.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{- define "ptah-operator.leaderElectionNamespace" -}}
{{ .Values.leaderElection.namespace | default .Release.Namespace }}
{{- end -}}

{{- define "ptah-operator.certManager" -}}
{{- if eq .Values.webhookCertificate.mode "certManager" -}}true{{- else if ne .Values.webhookCertificate.mode "secret" -}}
{{- fail (printf "webhookCertificate.mode must be secret or certManager, not %q" .Values.webhookCertificate.mode) -}}
{{- end -}}
{{- end -}}
