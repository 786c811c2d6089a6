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

{{- /* The rules controller-gen generated from the +kubebuilder:rbac markers
(rbac/role.yaml, copied from config/rbac by make manifests) for one scope:
"" for the ClusterRole, or a Role's namespace, which names a scope
(operator-namespace, tekton-namespace, workflow-namespace). Args: root, scope. */ -}}
{{- define "kfp-tekton-operator.generatedRules" -}}
{{- $found := false -}}
{{- range $doc := regexSplit "(?m)^---$" (.root.Files.Get "rbac/role.yaml") -1 -}}
{{- $obj := fromYaml $doc -}}
{{- if and $obj.kind (eq (dig "metadata" "namespace" "" $obj) $.scope) -}}
{{- $found = true -}}
{{- toYaml $obj.rules | trimSuffix "\n" -}}
{{- end -}}
{{- end -}}
{{- if not $found -}}
{{- fail (printf "rbac/role.yaml has no rules for scope %q: run make manifests" $.scope) -}}
{{- end -}}
{{- end -}}

{{- /* The operator's rights in one workflow namespace, as generated. The
provider chart grants the same rules in a provider namespace. */ -}}
{{- define "kfp-tekton-operator.workflowRole" -}}
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: kfp-tekton-operator-workflows
  namespace: {{ .namespace }}
  labels:
    {{- include "kfp-tekton-operator.labels" .root | nindent 4 }}
rules:
  {{- include "kfp-tekton-operator.generatedRules" (dict "root" .root "scope" "workflow-namespace") | nindent 2 }}
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
