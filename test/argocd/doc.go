// Package argocd tests wavesmith's Argo CD integration with Argo CD's own
// code, without a cluster:
//
//   - the config management plugin (kustomize/argocd/plugin.yaml) served by
//     the real argocd-cmp-server (bin/argocd-cmp-server, built from
//     ./cmd/argocd-cmp-server) and called the way argocd-repo-server calls
//     it: discovery, the repository stream, the environment;
//   - the Lua health checks of kustomize/argocd/argocd-cm-patch.yaml, read
//     by Argo CD's settings manager and run by its Lua VM;
//   - the install kustomize/argocd documents (Argo CD v3.2.11's own
//     install.yaml as a resource, kustomize/argocd as a component), built
//     with the real kustomize.
//
// It is a nested module: argo-cd v3.2.11 pins k8s.io/* to v0.34.0 through
// replace directives, which the main module cannot follow. Run it with
// 'make test' in the repository root, which builds the tools and exports
// ARGOCD_CMP_SERVER_BIN, WAVESMITH_BIN and KUSTOMIZE_BIN.
package argocd
