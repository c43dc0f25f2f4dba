// Package parity holds the fidelity suite: public Helm charts and
// kustomizations, fetched from the Go module proxy at pinned versions
// (corpus.yaml), each rendered by wavesmith as a Component and by the real
// tool it wraps (helm template v3.22.0, kustomize build v5.8.2), and
// compared object for object, field for field.
//
// It talks to wavesmith only through its binary (WAVESMITH_BIN) and to the
// reference tools through theirs (PARITY_HELM_BIN, KUSTOMIZE_BIN); every
// normalisation between the two outputs is listed, with its reason, in
// normalize_test.go and in README.md, and every intended difference in
// allow_test.go. It needs nothing the root module does not pin, so it is
// a package of the root module; its tests skip under go test -short or
// without the tools (internal/testtool). Run it with 'make parity' (or
// 'make test') in the repository root.
package parity
