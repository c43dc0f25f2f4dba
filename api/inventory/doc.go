// Package inventory defines, once, the contract between the renderer and the
// status controller: the wavesmith.io/* annotation names, the allowed policy
// values, and the format of the inventory a rendered spec carries. Render
// writes these; status reads them; neither imports the other.
package inventory
