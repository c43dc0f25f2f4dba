// Package layout holds tests of the repository's own layout: what no
// other test sees because it lies between the modules.
package layout
