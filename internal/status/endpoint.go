package status

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// regexSuffix is what the Kaoto Ingress path carries for the nginx rewrite;
// it is not part of the URL users open.
const regexSuffix = "(/|$)(.*)"

// Endpoint computes a URL that serves the Kaoto designer, in this order:
//   - a Route admitted by a router (status.ingress[] Admitted True):
//     https://<admitted host><path>/ (http when the Route has no TLS),
//     unless its path carries a regular expression (routePathProblem);
//   - an Ingress with a host: http(s)://<host><path>/, https when a TLS
//     entry covers the host, the rewrite regex removed from the path;
//   - an Ingress with a load-balancer address: http://<address><path>/;
//   - the Service: http://<name>.<namespace>.svc.cluster.local:<port>/.
//
// A Route that is not admitted, or rejected, gives no URL: its host is not
// served. The Kaoto operator ignored the Ingress host and path, left out
// the Service port, and reported a Route's host and path whatever the
// router said; see docs/status-controller.md.
func Endpoint(svc, ingress, route *unstructured.Unstructured) string {
	if route != nil && routePathProblem(route) == "" {
		if host, _ := admittedHost(route); host != "" {
			path, _, _ := unstructured.NestedString(route.Object, "spec", "path")
			scheme := "https"
			if _, tls, _ := unstructured.NestedMap(route.Object, "spec", "tls"); !tls {
				scheme = "http"
			}
			return withSlash(scheme + "://" + host + path)
		}
	}
	if ingress != nil {
		host, path := ingressRule(ingress)
		if host != "" {
			scheme := "http"
			if ingressTLS(ingress, host) {
				scheme = "https"
			}
			return withSlash(scheme + "://" + host + path)
		}
		lb, _, _ := unstructured.NestedSlice(ingress.Object, "status", "loadBalancer", "ingress")
		if len(lb) > 0 {
			if m, ok := lb[0].(map[string]any); ok {
				addr, _ := m["hostname"].(string)
				if addr == "" {
					addr, _ = m["ip"].(string)
				}
				if addr != "" {
					return withSlash("http://" + addr + path)
				}
			}
		}
	}
	if svc != nil {
		port := int64(80)
		ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
		if len(ports) > 0 {
			if m, ok := ports[0].(map[string]any); ok {
				if p, ok := m["port"].(int64); ok {
					port = p
				}
			}
		}
		return fmt.Sprintf("http://%s.%s.svc.cluster.local:%d/", svc.GetName(), svc.GetNamespace(), port)
	}
	return ""
}

// routePathProblem explains why a Route's path serves no URL, or returns
// "". A Route matches its path literally, as a prefix: the Kaoto operator
// copies a spec.ingress.path that ends in the nginx rewrite regex
// (/|$)(.*) verbatim into the Route, and the designer is then served only
// under that literal text.
func routePathProblem(route *unstructured.Unstructured) string {
	path, _, _ := unstructured.NestedString(route.Object, "spec", "path")
	if !strings.Contains(path, regexSuffix) {
		return ""
	}
	return fmt.Sprintf("Route %s/%s path %q carries the Ingress regex %s, which a Route matches literally: no URL serves the designer through it; set spec.ingress.path without %s",
		route.GetNamespace(), route.GetName(), path, regexSuffix, regexSuffix)
}

func ingressRule(ingress *unstructured.Unstructured) (host, path string) {
	rules, _, _ := unstructured.NestedSlice(ingress.Object, "spec", "rules")
	if len(rules) == 0 {
		return "", ""
	}
	r, _ := rules[0].(map[string]any)
	host, _ = r["host"].(string)
	paths, _, _ := unstructured.NestedSlice(r, "http", "paths")
	if len(paths) > 0 {
		if p, ok := paths[0].(map[string]any); ok {
			path, _ = p["path"].(string)
		}
	}
	path = strings.TrimSuffix(path, regexSuffix)
	return host, path
}

func ingressTLS(ingress *unstructured.Unstructured, host string) bool {
	tls, _, _ := unstructured.NestedSlice(ingress.Object, "spec", "tls")
	for _, t := range tls {
		m, _ := t.(map[string]any)
		hosts, _ := m["hosts"].([]any)
		for _, h := range hosts {
			if h == host {
				return true
			}
		}
	}
	return false
}

func withSlash(s string) string {
	if strings.HasSuffix(s, "/") {
		return s
	}
	return s + "/"
}
