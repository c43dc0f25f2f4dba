// Package load reads a render's inputs: the objects in the files and
// folders a door names, under the root the door decided, and nothing else.
//
// It knows no spec kind. The generator registry the door passes decides
// which objects are specs (generators.Registry.Lookup), and each spec's
// generator says what the spec reads (generators.Reader): those files and
// folders are the spec's sources, never loose objects of the render. A
// source that covers a file holding a spec, of any kind of the registry,
// is an error naming both (generators.ErrSourceCoversSpec): no spec is dropped
// silently. Folders are walked once each, confined to the root
// (fsroot.Root), listed with fsroot.ListDir (entry types from the
// listing, no lstat per file), within MaxFolderDepth, skipping
// .wavesmithignore entries, hidden entries and rendered trees. The walk
// lists no sizes: MaxRenderInputSize is counted as files are read, reads
// stop once it is over, and only then are the inputs stat'd, to name the
// file that takes the total over in input order (the error does not
// depend on the order reads finish in).
//
// Inputs is ReadInputs (listing and reading, each file's SHA-256 kept,
// at most maxHeld bytes held; a folder's files read through the folder
// opened once, fsroot.Dir) then Read.Decode: the CLI digests the files
// (Read.Each) for its tree cache before it decides to decode them.
//
// The doors (cmd/wavesmith, internal/argocdplugin, functions) call it; the engine
// (package render) takes the objects it returns.
package load
