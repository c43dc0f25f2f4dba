// Package status is wavesmith's thin status controller. It never creates,
// updates or deletes anything but the status of Kaoto and Component
// resources: it reads the children listed in each spec's
// wavesmith.io/inventory annotation (what the renderer recorded, and Flux or
// Argo CD applied), computes their health with kstatus and the
// wavesmith.io/status-hint annotations, and writes phase or state,
// conditions (with a kstatus-compatible Ready), observedGeneration and, for
// Kaoto, the endpoint. It writes only when the status changes. Its cache
// keeps only what status reads (trimForStatus, metadata-only watches),
// holds built-in children as their Go types (typedChild: the API server
// sends them as protobuf) and lists the kinds sent as JSON rather than
// streaming them (newInformer), so that a cold start costs little; and
// a label selector (Options.WatchLabelSelector, on ShardKey) shards the
// specs across replicas, each shard with its own Lease (LeaseName). Every
// replica fills its cache before it leads (controller warm-up and
// warmer, which starts the informers of every child kind the specs list),
// so that a standby takes over from a leader that gave up its Lease with
// every status computable at once.
package status
