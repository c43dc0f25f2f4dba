// Package config turns render configuration into engine options, once for
// every door. A door (the CLI, the Argo CD plugin, the KRM function) reads
// its sources into Layers, highest precedence first: flags, Argo CD
// parameters, Argo CD env entries, the project file .wavesmith.yaml, the
// tree's record of its last render; Merge takes each field from the first
// layer that sets it and remembers where it came from, so that a mistake
// names the flag, parameter or file field the user wrote; Options checks
// the result and returns render.Options.
package config
