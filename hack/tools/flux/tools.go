//go:build tools

// Package tools pins the two binaries this module builds.
package tools

import (
	_ "github.com/fluxcd/flux2/v2/cmd/flux"
	_ "github.com/fluxcd/kustomize-controller"
)
