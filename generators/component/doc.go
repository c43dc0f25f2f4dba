// Package component reads wavesmith.io/v1alpha1 Component specs for the
// generators that render them (helm, kustomize): strict decoding with
// field paths, source paths kept inside the repository root, placement and
// values.
package component
