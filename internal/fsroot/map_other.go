//go:build !linux

package fsroot

import "os"

// MapsFiles: MapFile reads files into the heap here.
func MapsFiles() bool { return false }

// mapFile: no mapping here; MapFile reads the file.
func mapFile(*os.File, int64) ([]byte, bool) { return nil, false }
