// Package tree reads and writes folder trees without trusting their
// content: files come from pull requests, names from objects.
//
// Write puts a GitOps tree in place whole (built aside, then swapped in
// with one atomic exchange) under a lock, through an os.Root so that no
// path leaves the folder. Read and OpenFS read a tree back. Root reads
// the inputs of a render below a repository root: never outside it,
// through symlinks neither, regular files only, each under a size cap.
// Diff and UnifiedDiff compare trees.
package tree
