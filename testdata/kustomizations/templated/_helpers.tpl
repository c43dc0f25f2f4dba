{{- define "storefront.labels" -}}
app.kubernetes.io/name: storefront
app.kubernetes.io/version: {{ .Values.image.tag | quote }}
{{- end -}}

{{- define "storefront.hasServiceMonitor" -}}
{{- range apiResources -}}
{{- if eq .GroupVersion "monitoring.coreos.com/v1" -}}
{{- range .APIResources }}{{ if eq .Kind "ServiceMonitor" }}true{{ end }}{{ end -}}
{{- end -}}
{{- end -}}
{{- end -}}
