//go:build !linux && !darwin && !freebsd

package outtree

import "context"

// update is the in-place update of a tree (update_unix.go: Linux, macOS, FreeBSD); elsewhere a
// tree is always replaced whole.
func update(context.Context, string, string, map[string][]byte, Known) (*Index, error) {
	return nil, errNoUpdate
}

// finish completes a killed in-place update; none runs here.
func finish(string, string) []error { return nil }
