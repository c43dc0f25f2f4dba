// Package flux writes the Flux side of a GitOps tree: one
// kustomize.toolkit.fluxcd.io/v1 Kustomization per wave, chained with
// dependsOn and wait, each applying a folder that lists that wave's object
// files of the tree.
//
// Flux runs no plugins, so waves must become Kustomizations. That brings a
// hazard the tree alone does not have: when an object moves from wave a to
// a later wave b, Kustomization a reconciles first (b depends on it), finds
// the object gone from its source and prunes it; b re-creates it a moment
// later, with a new UID and whatever data it held lost. The same happens
// when a wave's Kustomization disappears altogether: its finalizer deletes
// what it still owns.
//
// Files therefore reads the previous tree and leaves a handoff stub in
// every old wave that would otherwise prune or delete a moved object: the
// object's identity only, annotated kustomize.toolkit.fluxcd.io/ssa:
// Ignore. kustomize-controller skips such an object on apply, keeps it out
// of its health checks and excludes it from garbage collection, while the
// new wave adopts the live object by applying it (its owner labels change
// to the new Kustomization). Stubs are kept on later renders as long as
// the object stays where it moved, so rendering is idempotent and `check`
// stays green; deleting a stub file by hand once Flux has reconciled is
// safe and it does not come back.
package flux
