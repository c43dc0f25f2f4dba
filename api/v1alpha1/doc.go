// Package v1alpha1 holds the Go types of the wavesmith.io/v1alpha1 API:
// Component (a chart or kustomization with its parameters, waves and
// policies) and RenderConfig (the options of a render, used as the KRM
// function's functionConfig).
package v1alpha1
