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

{{- /* The operator's rights in the shared workflow namespace: the generated
workflow-namespace rules, with writes to service accounts narrowed to the
compiler account (kfp-tekton-compiler, tasks/taskdef), which the operator
applies and deletes (create cannot be narrowed by name). Reads stay
namespace-wide: any account there may be marked for a Provider. The provider
chart narrows the same rules further in a provider namespace. */ -}}
{{- define "kfp-tekton-operator.workflowRules" -}}
{{- $rules := list -}}
{{- range $rule := include "kfp-tekton-operator.generatedRules" (dict "root" . "scope" "workflow-namespace") | fromYamlArray -}}
{{- if and (eq (toJson $rule.apiGroups) "[\"\"]") (has "serviceaccounts" $rule.resources) -}}
{{- $others := without $rule.resources "serviceaccounts" -}}
{{- if $others -}}
{{- $rules = append $rules (dict "apiGroups" $rule.apiGroups "resources" $others "verbs" $rule.verbs) -}}
{{- end -}}
{{- range $verb := $rule.verbs -}}
{{- $byVerb := dict "apiGroups" $rule.apiGroups "resources" (list "serviceaccounts") "verbs" (list $verb) -}}
{{- if and (ne $verb "get") (ne $verb "create") -}}
{{- $_ := set $byVerb "resourceNames" (list "kfp-tekton-compiler") -}}
{{- end -}}
{{- $rules = append $rules $byVerb -}}
{{- end -}}
{{- else -}}
{{- $rules = append $rules $rule -}}
{{- end -}}
{{- end -}}
{{- toYaml $rules | trimSuffix "\n" -}}
{{- end -}}

{{- /* The operator's rights in one workflow namespace. */ -}}
{{- define "kfp-tekton-operator.workflowRole" -}}
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: kfp-tekton-operator-workflows
  namespace: {{ .namespace }}
  labels:
    {{- include "kfp-tekton-operator.labels" .root | nindent 4 }}
rules:
  {{- include "kfp-tekton-operator.workflowRules" .root | nindent 2 }}
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
