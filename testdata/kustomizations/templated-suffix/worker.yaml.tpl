apiVersion: apps/v1
kind: Deployment
metadata:
  name: [[ name ]]-worker
  namespace: [[ namespace ]]
spec:
  replicas: [[ .Values.replicas | default 1 ]]
  selector:
    matchLabels:
      app: [[ name ]]-worker
  template:
    metadata:
      labels:
        app: [[ name ]]-worker
    spec:
      containers:
      - name: worker
        image: [[ .Values.image ]]
        args:
        [[- range .Values.queues ]]
        - --queue=[[ . ]]
        [[- end ]]
