package render

import "errors"

// Sentinel errors of the engine, checked with errors.Is. Most come wrapped
// in a *manifest.Error that names the file, the object and the field.
var (
	ErrOptions       = errors.New("invalid render options")
	ErrEmptyInput    = errors.New("no objects in the input")
	ErrAnnotation    = errors.New("invalid annotation")
	ErrDuplicate     = errors.New("duplicate object")
	ErrGenerateName  = errors.New("metadata.generateName is not supported")
	ErrWaveOrder     = errors.New("wave order violated")
	ErrApplierMarker = errors.New("applier marker")
	// ErrUnserved: an object of a group wavesmith owns (designer.kaoto.io,
	// wavesmith.io) whose kind or version no generator serves.
	ErrUnserved = errors.New("not served by wavesmith")
	// ErrPartOf: the part-of setting (--part-of, spec.partOf) is not a
	// valid label value.
	ErrPartOf = errors.New("part-of (--part-of, spec.partOf) is not a valid label value")
)
