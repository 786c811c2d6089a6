{{- /* The rules controller-gen generated from the operator's
+kubebuilder:rbac markers (rbac/role.yaml, copied from config/rbac by make
manifests) for one scope (a Role's namespace there names a scope). Args:
root, scope. */ -}}
{{- define "kfp-tekton-provider.generatedRules" -}}
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

{{- /* The operator's rights in this namespace: the generated
workflow-namespace rules, with service accounts narrowed to this provider's
and secrets to the image pull secrets it lists (none: no secrets at all). */ -}}
{{- define "kfp-tekton-provider.operatorRules" -}}
{{- $pullSecrets := list -}}
{{- range .Values.serviceAccount.imagePullSecrets -}}
{{- $pullSecrets = append $pullSecrets .name -}}
{{- end -}}
{{- $rules := list -}}
{{- range $rule := include "kfp-tekton-provider.generatedRules" (dict "root" . "scope" "workflow-namespace") | fromYamlArray -}}
{{- if and (eq (toJson $rule.apiGroups) "[\"\"]") (or (has "serviceaccounts" $rule.resources) (has "secrets" $rule.resources)) -}}
{{- range $resource := $rule.resources -}}
{{- $narrowed := dict "apiGroups" $rule.apiGroups "resources" (list $resource) "verbs" $rule.verbs -}}
{{- if eq $resource "serviceaccounts" -}}
{{- /* Reads: the provider's account and the compiler account. Writes: only
  the compiler account (kfp-tekton-compiler, tasks/taskdef), which the
  operator applies and deletes; create cannot be narrowed by name. */ -}}
{{- range $verb := $rule.verbs -}}
{{- $byVerb := dict "apiGroups" $rule.apiGroups "resources" (list $resource) "verbs" (list $verb) -}}
{{- if eq $verb "get" -}}
{{- $_ := set $byVerb "resourceNames" (list $.Values.serviceAccount.name "kfp-tekton-compiler") -}}
{{- else if ne $verb "create" -}}
{{- $_ := set $byVerb "resourceNames" (list "kfp-tekton-compiler") -}}
{{- end -}}
{{- $rules = append $rules $byVerb -}}
{{- end -}}
{{- else if eq $resource "secrets" -}}
{{- if $pullSecrets -}}
{{- $_ := set $narrowed "resourceNames" $pullSecrets -}}
{{- $rules = append $rules $narrowed -}}
{{- end -}}
{{- else -}}
{{- $rules = append $rules $narrowed -}}
{{- end -}}
{{- end -}}
{{- else -}}
{{- $rules = append $rules $rule -}}
{{- end -}}
{{- end -}}
{{- toYaml $rules | trimSuffix "\n" -}}
{{- end -}}
