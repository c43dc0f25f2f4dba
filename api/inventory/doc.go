// Package inventory defines, once, the contract between the renderer and the
// status controller: the wavesmith.io/* annotation names, the allowed policy
// values, and the format of the inventory a rendered spec carries. Render
// writes these; status reads them; neither imports the other.
//
// The wavesmith.io/inventory annotation holds one line per child, sorted:
//
//	group/version/Kind/namespace/name[ hook=<list>][ purge-order=<n>]
//
// hook= is the child's wavesmith.io/hook (pre-install, post-install, comma
// separated) and purge-order= its wavesmith.io/purge-order. Lines without
// attributes are the format of earlier releases and still parse.
package inventory
