// Package generators defines the Generator interface: one implementation
// per spec kind turns a spec into its child objects. Generators only
// generate; labels, waves, policies, validation and ordering are the
// engine's (package render). A generator that places objects in other
// waves than its spec's (Helm hooks) returns offsets from the spec's wave
// (Result.Offsets): it never knows the wave, which the engine's wave plan
// decides.
package generators
