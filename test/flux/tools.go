//go:build tools

// Package tools pins the flux CLI, built by mk/flux.mk into bin/flux.
package tools

import _ "github.com/fluxcd/flux2/v2/cmd/flux"
