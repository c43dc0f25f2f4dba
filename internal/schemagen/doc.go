// Package schemagen turns the openAPIV3Schema of a CustomResourceDefinition
// into a JSON Schema (draft 2020-12) of a whole document of its kind, for
// editors: apiVersion and kind as constants, metadata, and the CRD's
// properties with the Kubernetes extensions mapped to plain JSON Schema.
// Objects refuse unknown fields unless the CRD preserves them, as
// wavesmith's decoders do. hack/schemagen writes schemas/ with it (make
// generate).
package schemagen
