//go:build !linux

package outtree

import "os"

// readFiles is Read's walk.
func readFiles(dir string) (map[string][]byte, error) { return readPortable(dir) }

// folderWriter returns writeFiles' writer of one folder of the new tree.
func folderWriter(root *os.Root, _ string) (func(d string, names []string, files map[string][]byte) error, func(), error) {
	write := func(d string, names []string, files map[string][]byte) error {
		return writeFolderRoot(root, d, names, files)
	}
	return write, func() {}, nil
}
