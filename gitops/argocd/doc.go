// Package argocd writes the Argo CD Application objects
// (argoproj.io/v1alpha1) that deploy a wavesmith GitOps tree from a git
// repository. Applications returns them as extra tree files, all under
// _argocd/; the tree's root kustomization.yaml does not list _argocd/, so
// `kustomize build` of the tree (and so an Application of the whole tree)
// never contains the Applications themselves.
//
// Layout. Without Component dependencies (no Component has
// spec.dependsOn), one Application, _argocd/<name>.yaml, deploys the whole
// tree: its source path is the tree's folder, which Argo CD builds with
// kustomize (the root kustomization.yaml lists every folder), and the
// objects' own argocd.argoproj.io/sync-wave annotations order the sync.
//
// With Component dependencies, an app of apps:
//
//	_argocd/<name>.yaml            root Application, source <path>/_argocd/apps
//	_argocd/apps/<child>.yaml      one Application per tree folder
//
// Each spec folder (<namespace>/<kind>-<name>/) and the pass-through folder
// (_objects/, when present) gets a child Application whose source path is
// that folder (built with kustomize: each folder has a kustomization.yaml)
// and whose sync-wave annotation orders it in the root Application's sync:
//
//   - a spec folder's wave is the earliest wave of the spec's objects, as
//     the engine placed them: a Component that depends on another starts
//     one wave after the other's last object (its hooks included), so a
//     dependent Application is synced after its dependencies' ones;
//   - the _objects/ Application's wave is the lowest wave of its objects
//     (usually the Namespaces' -1), so the objects that no spec generated,
//     such as Namespaces, come first.
//
// _argocd/apps/ is a plain directory of YAML files, not a kustomization:
// Argo CD reads it as a directory source, non-recursively, so the root
// Application needs no kustomize and cannot pick up the root Application
// (_argocd/<name>.yaml lies one folder up).
//
// Child Application names are <name>-<namespace>-<kind>-<spec name> and
// <name>-objects; a name longer than 63 characters (the label-value limit,
// for Argo CD's label tracking) or that two folders would share is cut and
// given a hash of the folder. Child Applications carry the finalizer
// resources-finalizer.argocd.argoproj.io: when a spec leaves the tree, the
// root Application prunes its child Application, and the finalizer makes
// Argo CD delete the child's objects too, as the single Application's
// prune would (objects annotated Prune=false or Delete=false stay).
//
// Sync policy of every Application: automated, with prune and selfHeal,
// and the syncOption ServerSideApply=true, because wavesmith's update
// policies assume server-side apply (objects that need client-side apply
// or replace say so in their own argocd.argoproj.io/sync-options).
// Child Applications of spec folders add CreateNamespace=true and send
// their objects to the spec's namespace, so a spec's folder syncs even when
// no Namespace object of the tree creates its namespace. The root
// Application's destination is always the in-cluster API server, in the
// Applications' namespace, since that is where its objects (the child
// Applications) live; the children use DestinationServer.
//
// Argo CD (since 1.8) assesses no health for Application objects: for the
// root Application to wait for the children of one wave to be healthy
// before syncing the next, argocd-cm must declare the health check of
// argoproj.io/Application (resource.customizations.health.argoproj.io_Application,
// the Lua script of the Argo CD documentation's app-of-apps section).
// Without it the waves still order the creation of the child
// Applications, but do not wait for them.
//
// Output is deterministic: the same result and options give the same
// files, byte for byte. Each file starts with render.TreeHeader.
package argocd
