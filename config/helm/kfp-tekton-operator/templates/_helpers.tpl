{{- define "kfp-tekton-operator.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{- define "kfp-tekton-operator.labels" -}}
app.kubernetes.io/name: kfp-tekton-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- /* The operator's rights in one workflow namespace. The provider chart
carries the same rules; keep them in step. */ -}}
{{- define "kfp-tekton-operator.workflowRole" -}}
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: kfp-tekton-operator-workflows
  namespace: {{ .namespace }}
  labels:
    {{- include "kfp-tekton-operator.labels" .root | nindent 4 }}
rules:
  - apiGroups: [tekton.dev]
    resources: [tasks]
    verbs: [create, update, patch, delete, deletecollection]
  - apiGroups: [tekton.dev]
    resources: [pipelineruns]
    verbs: [create, update, patch, delete]
  - apiGroups: [tekton.dev]
    resources: [taskruns]
    verbs: [get]
  - apiGroups: [""]
    resources: [serviceaccounts, secrets]
    verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: kfp-tekton-operator-workflows
  namespace: {{ .namespace }}
  labels:
    {{- include "kfp-tekton-operator.labels" .root | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: kfp-tekton-operator-workflows
subjects:
  - kind: ServiceAccount
    name: {{ .root.Values.serviceAccount.name }}
    namespace: {{ .root.Release.Namespace }}
{{- end -}}
