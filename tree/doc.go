// Package tree reads and writes folder trees without trusting their
// content: files come from pull requests, names from objects.
//
// Write puts a GitOps tree in place whole (built aside, then swapped in
// with one atomic exchange) under a lock, through an os.Root so that no
// path leaves the folder. Read and OpenFS read a tree back. Root reads
// the inputs of a render below a repository root: never outside it,
// through symlinks neither, regular files only, each under a size cap.
// Diff and UnifiedDiff compare trees.
//
// Root is the one boundary every door reads through; Confine checks a
// path that need not exist yet (an output folder). WriteIn confines the
// output folder's parents to an anchor (the render's root) and makes them
// there only; the lock file is opened with O_NOFOLLOW (a symlink is
// refused, never followed); a cancelled context (SIGINT, SIGTERM) removes
// the temporary folder and the lock. ReadLocked reads a tree under the
// same lock, so check never reads a tree being swapped.
package tree
