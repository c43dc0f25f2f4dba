// Package functions adapts the render engine to the KRM Functions
// Specification (kpt, kustomize exec functions): a ResourceList in, the
// same items plus the rendered children out, problems as structured
// results. It renders nothing itself; package render does.
package functions
