// Package livediff asks the API server what applying rendered objects would
// change in a cluster, and shows it as one unified diff per object.
//
// For each object it reads the live object (GET; absent means new) and
// applies the rendered object server-side with DryRun=All, the field manager
// of Options (default FieldManager, which owns nothing; the applier's, such
// as FluxFieldManager or ArgoCDFieldManager, shows the fields the render
// stopped setting as removed) and Force (so that fields other managers own
// are shown with the rendered value, as an applier that forces conflicts
// would set them). Both sides lose what is noise to a reader before they are
// compared (metadata.managedFields, resourceVersion, generation, uid,
// creationTimestamp, status and the kubectl.kubernetes.io/last-applied-configuration
// annotation), are encoded as YAML with sorted keys, and compared with
// textdiff.UnifiedDiff, the diff check prints. Secret data and stringData values
// never appear: both sides show "(sensitive)", and a changed value
// "(sensitive, changed)" on the applied side.
//
// Objects the server cannot dry-run yet because the same render creates what
// they need (their Namespace, checked once per namespace, or the
// CustomResourceDefinition of their kind, serving their version) are shown
// as new, as rendered, and marked as not checked by the API server. A kind
// the cluster does not know and the render does not define, or a version
// neither serves, is an error naming the object and the versions served.
// An object the server refuses to update in place (a field is immutable) is
// a Replace: the live object with the rendered fields laid over it
// (overlay), and an error (ErrImmutable) unless its annotations let the
// applier delete and re-create it.
//
// Objects no longer rendered are found from inventories
// (wavesmith.io/inventory): the children the live specs list, and the live
// specs of Options.SpecKinds in the namespaces the render's objects occupy
// that the render no longer has, with their children (only those applied
// by the same Flux Kustomization or Argo CD Application as the specs still
// rendered, when those carry its marks, and then in every namespace). Each is a Prune, or a Keep when an
// annotation keeps it from pruning (keptBy). Options.SkipHooks leaves hooks
// out, as Argo CD does.
//
// Requests are limited by Options.QPS (DefaultQPS) over Options.Workers
// (DefaultWorkers); the live objects of a resource the render has many
// objects of in one namespace are read with one paginated LIST rather than
// a GET each. A lost connection or refused credentials stop the comparison
// with one error wrapping ErrCluster.
package livediff
