// Package gitops is the contract between the render engine and the
// packages of the GitOps engines wavesmith delivers to (gitops/argocd,
// gitops/flux), registered in gitops/engines:
//
//   - Lifecycle is the resolved waves and policies of one object, which a
//     Dialect writes as its engine's annotations;
//   - Plan is the wave plan and tree layout of a render result: every
//     object's wave and tree path, every spec's span of waves and its
//     dependencies. The engine decides it once; delivery packages read it
//     and never recompute a wave;
//   - Engine is what one GitOps engine package provides: its Dialect and its
//     delivery files;
//   - KustomizationFile writes a tree's kustomization.yaml (the engine's
//     folders and Flux's waves); KustomizationHead and AppendResources
//     write one into a buffer the caller sized (ResourcesSize).
//
// The engine imports this package and the registry; engine packages import
// this package, never the engine.
package gitops
