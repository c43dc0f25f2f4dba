// Package config turns render configuration into engine options, once for
// every door. A door (the CLI, the Argo CD plugin, the KRM function) reads
// its sources into Layers, highest precedence first: flags, Argo CD
// parameters, Argo CD env entries, the project file .wavesmith.yaml, the
// tree's record of its last render; Merge takes each field from the first
// layer that sets it and remembers where it came from, so that a mistake
// names the flag, parameter or file field the user wrote; Options checks
// the result and returns render.Options.
//
// Settings is the one table of settings: each row's path in a
// RenderConfigSpec, its flag, its Argo CD parameter, its ConfigMap key
// for the KRM function, its help, allowed values and default, and the
// doors that take it. The flags, the parameters, the ConfigMap reader,
// kustomize/argocd/plugin.yaml's announcement and the documentation's
// tables are made from it (Setting.Set writes a value at its path; a
// test keeps plugin.yaml and the docs in step: go test ./config -update).
//
// Parse reads a RenderConfig document as specs are read: every mistake
// at once, each at its line and field path, unknown fields with the
// known ones. FindProject finds the project file as git finds .git: from
// a folder up to the root, never above it.
//
// Files are read only through a Root, the render's root, which the door
// decides and opens before reading any (ReadFile, Project): wavesmith's
// doors pass internal/fsroot's, and OpenRoot gives it to callers outside
// the module (Root is an interface so that they can name it); a project
// file or a record that is a symlink out of it, a FIFO or a device is an
// error.
// OptionsIn refuses every path setting (inputs, output, apiResources)
// that leaves the root lexically or through a symlink, and reads the
// apiResources file through it; Options opens the root the door names,
// never one of its own.
package config
