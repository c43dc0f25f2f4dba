//go:build !linux && !darwin && !freebsd

package outtree

import "context"

// readFiles is Read's walk.
func readFiles(dir string) (map[string][]byte, error) { return readPortable(dir) }

// readIndexed is ReadIndexed's walk: here every file is read, and no
// index is made.
func readIndexed(dir string, _ map[string][]byte, _ Known) (map[string][]byte, *Index, error) {
	files, err := readPortable(dir)
	return files, nil, err
}

// writeTree is writeFiles' writer: os.Root here, and no identities.
func writeTree(ctx context.Context, dir string, top *folderNode) error {
	return writeTreeRoot(ctx, dir, top)
}
