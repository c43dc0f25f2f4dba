// Package syncwaves syncs wavesmith's renders with Argo CD's own sync
// engine (github.com/argoproj/gitops-engine) against a real API server
// (envtest), in production order: wavesmith's CRDs are installed,
// argocd-cm holds the health checks of kustomize/argocd/argocd-cm-patch.yaml
// (read back through Argo CD's settings manager, as its application
// controller reads them), and wavesmith-status runs as its own process
// before the first sync. The objects `wavesmith render` writes are then
// synced wave by wave in the loop of Argo CD's controller, which judges
// Kaoto and Component by those Lua checks, while fake controllers make
// Deployments available, Jobs complete, Ingresses load-balanced and
// collect what Argo CD deletes in the foreground.
//
// The tests check that the examples converge (every wave waits for the
// health of the one before, hooks run and the hook-succeeded ones are
// deleted, every spec ends Healthy with Ready=True), and, as a control,
// that the placement of specs before they moved to the wave of their last
// child deadlocks.
//
// This is a nested module: gitops-engine and argo-cd pin k8s.io/* to
// v0.34.0 with replace directives, which the root module cannot take. Run
// it with `make test` or `make test-gitops-engine` from the repository
// root, which build bin/wavesmith, bin/wavesmith-status, bin/kube-apiserver
// and bin/etcd and export WAVESMITH_BIN, WAVESMITH_STATUS_BIN and
// KUBEBUILDER_ASSETS.
package syncwaves
