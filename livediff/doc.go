// Package livediff asks the API server what applying rendered objects would
// change in a cluster, and shows it as one unified diff per object.
//
// For each object it reads the live object (GET; absent means new) and
// applies the rendered object server-side with DryRun=All, the field manager
// FieldManager and Force (so that fields other managers own are shown with
// the rendered value, as an applier that forces conflicts would set them).
// Both sides lose what is noise to a reader before they are compared
// (metadata.managedFields, resourceVersion, generation, uid,
// creationTimestamp, status and the kubectl.kubernetes.io/last-applied-configuration
// annotation), are encoded as YAML with sorted keys, and compared with
// tree.UnifiedDiff, the diff check prints. Secret data and stringData values
// never appear: both sides show "(sensitive)", and a changed value
// "(sensitive, changed)" on the applied side.
//
// Objects the server cannot dry-run yet because the same render creates what
// they need (their Namespace, or the CustomResourceDefinition of their kind)
// are shown as new, as rendered, and marked as not checked by the API
// server. A kind the cluster does not know and the render does not define is
// an error naming the object and the kind.
//
// Objects the cluster has and the render no longer has are not listed:
// finding them needs an inventory of what was applied before, which is the
// GitOps engine's (or wavesmith-status's) job.
package livediff
