//go:build tools

// Package tools pins the two binaries this module builds, and wavesmith's
// own module, whose requirements raise every shared dependency to the
// version wavesmith builds with (see go.mod).
package tools

import (
	_ "github.com/wavesmith/wavesmith/api/inventory"
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
