package outtree

import "errors"

// Sentinel errors, checked with errors.Is.
var (
	// ErrWrite: the tree could not be written; the previous one is intact.
	ErrWrite = errors.New("cannot write the tree")
	// ErrNotTree: the output folder holds something wavesmith did not write.
	ErrNotTree = errors.New("not a tree wavesmith wrote")
	// ErrPath: a tree path is not a clean relative path below the tree.
	ErrPath = errors.New("invalid tree path")
	// ErrLocked: another render is writing the same tree.
	ErrLocked = errors.New("the tree is locked by another render")
	// ErrCleanup: the new tree is in place, but leftovers could not be
	// removed.
	ErrCleanup = errors.New("cannot clean up")
	// ErrRenderedTree: an input lies in a tree wavesmith rendered (it holds
	// RecordFile): rendered output is never input again.
	ErrRenderedTree = errors.New("a rendered tree is not an input")
	// ErrEmptyRecord: an empty RecordFile: it marks no tree wavesmith
	// rendered, yet would hide its folder's inputs.
	ErrEmptyRecord = errors.New("an empty tree record marks no rendered tree")
)
