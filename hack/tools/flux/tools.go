//go:build tools

package tools

import _ "github.com/fluxcd/flux2/v2/cmd/flux"
