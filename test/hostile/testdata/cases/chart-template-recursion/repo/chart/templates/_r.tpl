{{- define "r" }}{{ include "r" . }}{{- end }}
