// Package syncwaves checks wavesmith's Argo CD sync waves with Argo CD's
// own sync engine (github.com/argoproj/gitops-engine) against a real API
// server (envtest): the objects `wavesmith render` writes are synced wave
// by wave, with Argo CD's controller loop, while a fake kubelet and
// ingress controller make Deployments available, Jobs complete and
// Ingresses load-balanced after a delay.
//
// This is a nested module: gitops-engine pins k8s.io/* to v0.34.0 with a
// replace block, which the root module cannot take. Run it with
// `make test` from the repository root, which builds bin/wavesmith,
// bin/kube-apiserver and bin/etcd and exports WAVESMITH_BIN and
// KUBEBUILDER_ASSETS.
package syncwaves
