// Package manifest is the in-memory form of a Kubernetes object (a
// JSON-compatible map, with the file and line it came from), its YAML
// decoding with bounded cost, and a deterministic YAML encoder that writes
// bytes directly instead of round-tripping through a marshaller.
//
// Values inside an Object are limited to map[string]any, []any, string,
// int64, float64, bool and nil: what decoding JSON or YAML gives.
package manifest
