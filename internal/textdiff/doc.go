// Package textdiff prints unified diffs: of two texts (UnifiedDiff, used
// by diff and review per object) and of two sets of files (Diff, used by
// check between the rendered tree and the one on disk).
package textdiff
