// Package kindscope knows whether a kind is namespaced. A render places the
// objects of a chart or kustomization that carry no namespace in their
// Component's namespace, and must not do so for cluster-scoped kinds: an
// inventory would then name an object that does not exist.
//
// A Table is built from, by rank: what the user declares (a Component's
// spec.scopes, a file in the format of kubectl api-resources), the
// CustomResourceDefinitions of the render, and the built-in kinds of
// Kubernetes (builtin.txt, checked against a real kube-apiserver's
// discovery by this package's tests). A kind none of them knows is
// unknown: callers say so, never guess silently.
package kindscope
