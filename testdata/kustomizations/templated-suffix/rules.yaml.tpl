apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: [[ name ]]-worker
spec:
  groups:
  - name: worker
    rules:
    - alert: WorkerHighCPU
      expr: rate(container_cpu_usage_seconds_total{container="worker"}[5m]) * 100 > [[ .Values.alerts.cpuThreshold ]]
      labels:
        severity: [[ .Values.alerts.severity ]]
      annotations:
        summary: "Worker {{ $labels.pod }} uses {{ $value }}% CPU"
