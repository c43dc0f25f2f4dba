// Package review compares what the same inputs render to at two git
// revisions, object by object, for a reviewer of a pull request: which
// objects a change adds, removes or changes, and, first, which objects'
// waves, hooks or policies it changes. Secret values are masked as
// wavesmith diff masks them.
//
// The revisions are read straight from git's objects (git archive into a
// temporary folder): nothing is checked out, the work tree and the index
// stay as they are. The renders themselves are the caller's (the CLI
// renders each revision's folder exactly as wavesmith render would there,
// project file and settings of that revision included, both at the same
// temporary root and sharing a render.Memo, so that a spec unchanged
// between them is generated once); this package
// finds the repository, resolves and extracts revisions, compares the
// decoded streams and writes the report as text, Markdown sized for a
// pull-request comment, or JSON.
package review
