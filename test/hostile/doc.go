// Package hostile proves that bin/wavesmith treats every byte of its input
// as hostile (docs/design.md "Trust"): one folder per bad input under
// testdata/cases, each run through every door of the binary (the stream,
// the GitOps tree with and without Flux and Argo CD files, the KRM
// function, the Argo CD plugin), and the kill and concurrency experiments
// on the tree swap. The tests drive the binary named by $WAVESMITH_BIN as
// a separate process, so that exit codes, stdout, the file system around
// it and its peak memory are observed from outside.
package hostile
