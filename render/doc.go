// Package render is wavesmith's one rendering engine. The CLI, the KRM
// function, the Argo CD plugin and the CI check all call it:
//
//	validate specs (served kinds and versions of the registry's groups,
//	  served.go) -> generate (one Generator per spec kind)
//	  -> decorate (labels, wave and policy annotations per dialect, inventory)
//	  -> validate the object set -> sort -> emit (stream | tree | ResourceList)
//
// It reads no file itself and decides nothing a door decides: the objects
// come from package internal/load (or a ResourceList), and the options
// carry the generator registry, the GitOps engines and the root the door
// chose (Options.Generators, Engines, Root are required). It knows no spec
// kind and no engine by name. With Options.Reuse (a Memo, reuse.go) it
// hashes, under the root, the files specs read, and generates a spec only
// when no render sharing the Memo generated the same inputs before. With
// Options.Outputs (outputs.go) it takes a spec's whole output (children
// decorated and encoded, and the spec's own bytes when its children keep
// their order) from the record an earlier render, of the same process or
// not, made under the same digest; the objects' bytes are then the
// records' (Outputs.Piece), which a cache can name instead of copying.
//
// Objects are plain maps (package manifest); encoding is deterministic, so
// the same input gives byte-identical output whatever the map order or
// GOMAXPROCS.
package render
