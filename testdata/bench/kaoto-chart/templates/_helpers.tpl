{{- define "kaoto.labels" -}}
app.kubernetes.io/component: designer
app.kubernetes.io/instance: {{ .name }}
app.kubernetes.io/managed-by: kaoto-operator
app.kubernetes.io/name: kaoto
app.kubernetes.io/part-of: kaoto
{{- end -}}
{{- define "kaoto.probe" -}}
failureThreshold: 10
httpGet:
  path: /
  port: 8080
  scheme: HTTP
initialDelaySeconds: 5
periodSeconds: 10
successThreshold: 1
timeoutSeconds: 10
{{- end -}}
