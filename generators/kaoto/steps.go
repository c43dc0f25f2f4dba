package kaoto

import (
	"strings"

	"github.com/wavesmith/wavesmith/api/designer/v1alpha1"
	"github.com/wavesmith/wavesmith/manifest"
)

// labels are the five labels the operator sets on every child and on the
// Deployment's selector and pod template.
func labels(name any) map[string]any {
	return map[string]any{
		"app.kubernetes.io/component":  componentName,
		"app.kubernetes.io/instance":   name,
		"app.kubernetes.io/managed-by": managedBy,
		"app.kubernetes.io/name":       appName,
		"app.kubernetes.io/part-of":    appName,
	}
}

func metadata(k *v1alpha1.Kaoto, b boxed) map[string]any {
	m := map[string]any{"name": b.name, "labels": labels(b.name)}
	if k.Namespace != "" {
		m["namespace"] = b.namespace
	}
	return m
}

// boxed holds the spec's strings the children repeat, each stored in an
// interface once rather than once per use; passed by value.
type boxed struct{ name, namespace any }

// service is the operator's expose-service action.
func service(k *v1alpha1.Kaoto, _ *Generator, b boxed) *manifest.Object {
	return manifest.New(map[string]any{
		"apiVersion": "v1",
		"kind":       "Service",
		"metadata":   metadata(k, b),
		"spec": map[string]any{
			"ports":                    shared.servicePorts,
			"publishNotReadyAddresses": true,
			"selector": map[string]any{
				"app.kubernetes.io/instance": b.name,
				"app.kubernetes.io/name":     appName,
			},
			"sessionAffinity": "None",
		},
	})
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
func ingress(k *v1alpha1.Kaoto, _ *Generator, b boxed) *manifest.Object {
	if k.Spec.Ingress == nil {
		return nil
	}
	meta := metadata(k, b)
	meta["annotations"] = map[string]any{
		"nginx.ingress.kubernetes.io/rewrite-target": "/$2",
		"nginx.ingress.kubernetes.io/use-regex":      "true",
	}
	return manifest.New(map[string]any{
		"apiVersion": "networking.k8s.io/v1",
		"kind":       "Ingress",
		"metadata":   meta,
		"spec": map[string]any{
			"rules": []any{map[string]any{
				"host": k.Spec.Ingress.Host,
				"http": map[string]any{
					"paths": []any{map[string]any{
						"backend": map[string]any{
							"service": map[string]any{
								"name": b.name,
								"port": shared.backendPort,
							},
						},
						"path":     IngressPath(k),
						"pathType": "ImplementationSpecific",
					}},
				},
			}},
		},
	})
}

// route is the operator's expose-route action (OpenShift).
func route(k *v1alpha1.Kaoto, _ *Generator, b boxed) *manifest.Object {
	if k.Spec.Ingress == nil {
		return nil
	}
	meta := metadata(k, b)
	path := "/"
	if p := k.Spec.Ingress.Path; p != "" {
		path = p
		meta["annotations"] = map[string]any{"haproxy.router.openshift.io/rewrite-target": "/"}
	}
	return manifest.New(map[string]any{
		"apiVersion": "route.openshift.io/v1",
		"kind":       "Route",
		"metadata":   meta,
		"spec": map[string]any{
			"host": k.Spec.Ingress.Host,
			"path": path,
			"port": map[string]any{"targetPort": port},
			"tls": map[string]any{
				"insecureEdgeTerminationPolicy": "Redirect",
				"termination":                   "edge",
			},
			"to": map[string]any{"kind": "Service", "name": b.name},
		},
	})
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
func deployment(k *v1alpha1.Kaoto, g *Generator, b boxed) *manifest.Object {
	image := k.Spec.Image
	if image == "" {
		image = g.DefaultImage
	}
	if image == "" {
		image = DefaultImage
	}
	return manifest.New(map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   metadata(k, b),
		"spec": map[string]any{
			"replicas": int64(1),
			"selector": map[string]any{"matchLabels": labels(b.name)},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels(b.name)},
				"spec": map[string]any{
					"containers": []any{map[string]any{
						"env":             shared.env,
						"image":           image,
						"imagePullPolicy": "Always",
						"livenessProbe":   shared.probe,
						"name":            appName,
						"ports":           shared.containerPorts,
						"readinessProbe":  shared.probe,
						"resources":       shared.resources,
						"securityContext": shared.containerSecurity,
					}},
					"securityContext": shared.podSecurity,
				},
			},
		},
	})
}
