// Package config turns render configuration into engine options, once for
// every door. A door (the CLI, the Argo CD plugin, the KRM function) reads
// its sources into Layers, highest precedence first: flags, Argo CD
// parameters, Argo CD env entries, the project file .wavesmith.yaml, the
// tree's record of its last render; Merge takes each field from the first
// layer that sets it and remembers where it came from, so that a mistake
// names the flag, parameter or file field the user wrote; Options checks
// the result and returns render.Options.
//
// Files are read only through a tree.Root, the render's root, which the
// door decides before reading any (ReadFile, Project): a project file or
// a record that is a symlink out of it, a FIFO or a device is an error.
// OptionsIn refuses every path setting (inputs, output, apiResources)
// that leaves the root lexically or through a symlink, and reads the
// apiResources file through it.
package config
