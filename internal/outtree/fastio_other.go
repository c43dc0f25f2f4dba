//go:build !linux

package outtree

import "os"

// readFiles is Read's walk.
func readFiles(dir string) (map[string][]byte, error) { return readPortable(dir) }

// readIndexed is ReadIndexed's walk: here every file is read, and no
// index is made.
func readIndexed(dir string, _ map[string][]byte, _ Known) (map[string][]byte, *Index, error) {
	files, err := readPortable(dir)
	return files, nil, err
}

// folderWriter returns writeFiles' writer of one folder of the new tree;
// it records no identities (nil).
func folderWriter(root *os.Root, _ string) (func(d string, names []string, files map[string][]byte) ([]FileStat, error), func(), error) {
	write := func(d string, names []string, files map[string][]byte) ([]FileStat, error) {
		return nil, writeFolderRoot(root, d, names, files)
	}
	return write, func() {}, nil
}
