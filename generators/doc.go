// Package generators defines the Generator interface: one implementation
// per spec kind turns a spec into its child objects. Generators only
// generate; labels, waves, policies, validation and ordering are the
// engine's (package render).
package generators
