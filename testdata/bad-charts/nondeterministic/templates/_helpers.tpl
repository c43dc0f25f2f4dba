{{- define "nd.id" -}}
{{ uuidv4 }}
{{- end }}
