//go:build !linux

package fsroot

import "os"

// folderFd: no direct reads here (readDirect is Linux's).
func folderFd(*os.Root) *os.File { return nil }

func readDirect(int, string) ([]byte, bool) { return nil, false }
