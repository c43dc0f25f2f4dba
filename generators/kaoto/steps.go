package kaoto

import (
	"strings"

	"github.com/wavesmith/wavesmith/api/designer/v1alpha1"
	"github.com/wavesmith/wavesmith/manifest"
)

// labels are the five labels the operator sets on every child and on the
// Deployment's selector and pod template.
func labels(own *ownMaps, name any) map[string]any {
	m := own.m()
	m["app.kubernetes.io/component"] = componentName
	m["app.kubernetes.io/instance"] = name
	m["app.kubernetes.io/managed-by"] = managedBy
	m["app.kubernetes.io/name"] = appName
	m["app.kubernetes.io/part-of"] = appName
	return m
}

func metadata(own *ownMaps, k *v1alpha1.Kaoto, b boxed) map[string]any {
	m := own.m()
	m["name"], m["labels"] = b.name, labels(own, b.name)
	if k.Namespace != "" {
		m["namespace"] = b.namespace
	}
	return m
}

// object is a child of kind and apiVersion, with its metadata and spec.
// One without annotations has a map of the set reserved for those the
// render writes (manifest.Object.ReserveAnnotations). apiVersion and kind
// are constants the callers box (a string parameter would be boxed here,
// on every call).
func object(own *ownMaps, apiVersion, kind any, meta, spec map[string]any) *manifest.Object {
	m := own.m()
	m["apiVersion"], m["kind"], m["metadata"], m["spec"] = apiVersion, kind, meta, spec
	o := manifest.New(m)
	if _, ok := meta["annotations"]; !ok {
		o.ReserveAnnotations(own.m())
	}
	return o
}

// boxed holds the spec's strings the children repeat, each stored in an
// interface once rather than once per use; passed by value.
type boxed struct{ name, namespace any }

// service is the operator's expose-service action.
func service(k *v1alpha1.Kaoto, _ *Generator, b boxed, own *ownMaps) *manifest.Object {
	selector := own.m()
	selector["app.kubernetes.io/instance"], selector["app.kubernetes.io/name"] = b.name, appName
	spec := own.m()
	spec["ports"], spec["publishNotReadyAddresses"], spec["selector"], spec["sessionAffinity"] = shared.servicePorts, true, selector, "None"
	return object(own, "v1", "Service", metadata(own, k, b), spec)
}

// IngressPath is the operator's path algorithm: "/<name>" by default, the
// spec's path when given, with the regex suffix the nginx rewrite needs
// appended unless already there.
func IngressPath(k *v1alpha1.Kaoto) string {
	p := "/" + k.Name + pathSuffix
	if k.Spec.Ingress != nil && k.Spec.Ingress.Path != "" {
		p = k.Spec.Ingress.Path
	}
	if !strings.HasSuffix(p, pathSuffix) {
		p += pathSuffix
	}
	return p
}

// ingress is the operator's expose-ingress action (Kubernetes).
func ingress(k *v1alpha1.Kaoto, _ *Generator, b boxed, own *ownMaps) *manifest.Object {
	if k.Spec.Ingress == nil {
		return nil
	}
	meta := metadata(own, k, b)
	annotations := own.m()
	annotations["nginx.ingress.kubernetes.io/rewrite-target"] = "/$2"
	annotations["nginx.ingress.kubernetes.io/use-regex"] = "true"
	meta["annotations"] = annotations
	svc := own.m()
	svc["name"], svc["port"] = b.name, shared.backendPort
	backend := own.m()
	backend["service"] = svc
	path := own.m()
	path["backend"], path["path"], path["pathType"] = backend, IngressPath(k), "ImplementationSpecific"
	http := own.m()
	http["paths"] = own.list(path)
	rule := own.m()
	rule["host"], rule["http"] = k.Spec.Ingress.Host, http
	spec := own.m()
	spec["rules"] = own.list(rule)
	return object(own, "networking.k8s.io/v1", "Ingress", meta, spec)
}

// route is the operator's expose-route action (OpenShift).
func route(k *v1alpha1.Kaoto, _ *Generator, b boxed, own *ownMaps) *manifest.Object {
	if k.Spec.Ingress == nil {
		return nil
	}
	meta := metadata(own, k, b)
	path := "/"
	if p := k.Spec.Ingress.Path; p != "" {
		path = p
		annotations := own.m()
		annotations["haproxy.router.openshift.io/rewrite-target"] = "/"
		meta["annotations"] = annotations
	}
	targetPort := own.m()
	targetPort["targetPort"] = port
	tls := own.m()
	tls["insecureEdgeTerminationPolicy"], tls["termination"] = "Redirect", "edge"
	to := own.m()
	to["kind"], to["name"] = "Service", b.name
	spec := own.m()
	spec["host"], spec["path"], spec["port"], spec["tls"], spec["to"] = k.Spec.Ingress.Host, path, targetPort, tls, to
	return object(own, "route.openshift.io/v1", "Route", meta, spec)
}

// shared holds the parts of the children that are the same for every
// Kaoto (a Kaoto's three children are 42 maps, 16 of them these), built
// once and shared by the children of every Kaoto instead of allocated
// for each. Nothing in wavesmith writes into a child below its metadata:
// decoration writes metadata's labels and annotations, which every child
// gets fresh (TestSharedPartsStayUnchanged renders through every door's
// options and compares these with fresh ones). A caller that changes a
// child below metadata copies it first (manifest.Object.DeepCopy), as
// Generate says.
var shared = newParts()

// parts are the constant parts of the children (shared).
type parts struct {
	servicePorts, env, containerPorts                             []any
	backendPort, probe, resources, containerSecurity, podSecurity map[string]any
}

func newParts() parts {
	return parts{
		servicePorts: []any{map[string]any{
			"name": portName, "port": port, "protocol": "TCP", "targetPort": portName,
		}},
		backendPort: map[string]any{"name": portName},
		env: []any{map[string]any{
			"name":      "NAMESPACE",
			"valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "metadata.namespace"}},
		}},
		probe: map[string]any{
			"failureThreshold":    int64(10),
			"httpGet":             map[string]any{"path": "/", "port": port, "scheme": "HTTP"},
			"initialDelaySeconds": int64(5),
			"periodSeconds":       int64(10),
			"successThreshold":    int64(1),
			"timeoutSeconds":      int64(10),
		},
		containerPorts: []any{map[string]any{
			"containerPort": port, "name": portName, "protocol": "TCP",
		}},
		resources: map[string]any{
			"requests": map[string]any{"cpu": "500m", "memory": "600Mi"},
		},
		containerSecurity: map[string]any{
			"allowPrivilegeEscalation": false,
			"runAsNonRoot":             true,
			"seccompProfile":           map[string]any{"type": "RuntimeDefault"},
		},
		podSecurity: map[string]any{
			"runAsNonRoot":   true,
			"seccompProfile": map[string]any{"type": "RuntimeDefault"},
		},
	}
}

// deployment is the operator's deploy action.
func deployment(k *v1alpha1.Kaoto, g *Generator, b boxed, own *ownMaps) *manifest.Object {
	image := k.Spec.Image
	if image == "" {
		image = g.DefaultImage
	}
	if image == "" {
		image = DefaultImage
	}
	c := own.m()
	c["env"], c["image"], c["imagePullPolicy"], c["livenessProbe"], c["name"] = shared.env, image, "Always", shared.probe, appName
	c["ports"], c["readinessProbe"], c["resources"], c["securityContext"] = shared.containerPorts, shared.probe, shared.resources, shared.containerSecurity
	podSpec := own.m()
	podSpec["containers"], podSpec["securityContext"] = own.list(c), shared.podSecurity
	podMeta := own.m()
	podMeta["labels"] = labels(own, b.name)
	template := own.m()
	template["metadata"], template["spec"] = podMeta, podSpec
	selector := own.m()
	selector["matchLabels"] = labels(own, b.name)
	spec := own.m()
	spec["replicas"], spec["selector"], spec["template"] = int64(1), selector, template
	return object(own, "apps/v1", "Deployment", metadata(own, k, b), spec)
}
