// Package render is wavesmith's one rendering engine. The CLI, the KRM
// function, the Argo CD plugin and the CI check all call it:
//
//	load & validate specs (served kinds and versions of the registry's
//	  groups, served.go) -> generate (one Generator per spec kind)
//	  -> decorate (labels, wave and policy annotations per dialect, inventory)
//	  -> validate the object set -> sort -> emit (stream | tree | ResourceList)
//
// Objects are plain maps (package manifest); encoding is deterministic, so
// the same input gives byte-identical output whatever the map order or
// GOMAXPROCS.
package render
