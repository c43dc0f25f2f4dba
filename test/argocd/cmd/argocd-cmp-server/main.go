// Command argocd-cmp-server is Argo CD's config management plugin server
// (the sidecar entry point), built from the Go module proxy so that the
// tests can run the wavesmith plugin the way Argo CD runs it.
package main

import (
	"os"

	cmpserver "github.com/argoproj/argo-cd/v3/cmd/argocd-cmp-server/commands"
)

func main() {
	if err := cmpserver.NewCommand().Execute(); err != nil {
		os.Exit(1)
	}
}
