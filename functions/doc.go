// Package functions adapts the render engine to the KRM Functions
// Specification (kpt, kustomize exec functions): a ResourceList in, the
// same items plus the rendered children out, problems as structured
// results. It renders nothing itself; package render does.
//
// The functionConfig is one configuration layer, merged by config.Merge
// between the door's (Processor.Above, Processor.Below); a RenderConfig
// is read by config.Parse, as the project file (every error at its line),
// and paths in it are confined to the root the door decided. What the
// function writes on a spec the user owns beyond the inventory and digest
// (an engine's wave) is recorded in WrittenAnnotation and forgotten by the
// next run, so that running on its own output with a config gives what
// running on the user's package gives. Every error is a result of one
// run: when an item is no object, the items that are still pass
// render.Check, as the CLI checks the files that decoded. One ResourceList
// is bounded (MaxInput, MaxItems, MaxNodes counted before parsing);
// beyond, an error result.
//
// Run reads the ResourceList with kyaml and writes the items it keeps,
// the functionConfig and the results as kyaml's framework does; the new
// children are written as render encoded them, with their path and index
// annotations in the forms the input uses (kio.ReconcileInternalAnnotations
// decides), never parsed into kyaml's nodes: at 10,000 Kaotos that took
// 23-35 s and 3 GB, against 3-4 s and 0.45 GB. Process runs inside
// kyaml's framework instead.
package functions
