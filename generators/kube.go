package generators

import (
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
)

// fallbackKubeVersion is offered when the binary carries no module
// information. Keep it at the minor of k8s.io/client-go in go.mod (a test
// checks).
const fallbackKubeVersion = "v1.37.0"

// DefaultKubeVersion is the Kubernetes version charts see without
// --kube-version: the one of the Kubernetes libraries wavesmith is built
// with (k8s.io/client-go v0.37.x gives v1.37.0), as released Helm binaries
// report the version of theirs.
func DefaultKubeVersion() string { return defaultKubeVersion() }

var defaultKubeVersion = sync.OnceValue(func() string {
	if v, ok := ModuleVersion("k8s.io/client-go"); ok {
		if kv, ok := kubeVersionOf(v); ok {
			return kv
		}
	}
	return fallbackKubeVersion
})

// ModuleVersion is the version of a module wavesmith is built with (its
// replacement's when replaced); false without module information, as in
// test binaries.
func ModuleVersion(path string) (string, bool) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "", false
	}
	for _, m := range info.Deps {
		if m.Path != path {
			continue
		}
		if m.Replace != nil {
			m = m.Replace
		}
		return m.Version, true
	}
	return "", false
}

// kubeVersionOf maps a k8s.io/client-go module version onto the Kubernetes
// version it belongs to, as Helm's Makefile does: v0.37.2 is v1.37.0.
func kubeVersionOf(clientGo string) (string, bool) {
	parts := strings.SplitN(strings.TrimPrefix(clientGo, "v"), ".", 3)
	if len(parts) < 2 {
		return "", false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || major != 0 || minor == 0 {
		return "", false
	}
	return fmt.Sprintf("v%d.%d.0", major+1, minor), true
}
