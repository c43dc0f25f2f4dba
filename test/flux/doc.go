// Package flux tests wavesmith's Flux output with Flux itself: the flux CLI
// (flux build kustomization) and kustomize-controller, the release Flux
// v2.9.5 ships, reconciling the generated Kustomizations from a
// GitRepository artifact on a real kube-apiserver and etcd (envtest), with
// wavesmith-status running beside it. It is a module of its own because
// Flux pins other k8s.io versions than wavesmith; the binaries are built by
// tool modules (hack/tools) into bin/, so this module compiles on its own.
package flux
