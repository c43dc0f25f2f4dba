//go:build !linux

package fsroot

import "os"

// folderFd: no direct reads here (readDirect is Linux's).
func folderFd(*os.Root) *os.File { return nil }

func readDirect(int, string, bool) ([]byte, bool) { return nil, false }

func shortReadIsEnd(int) bool { return false }

// LocalFileSystem: false where no file system is known (not Linux).
func LocalFileSystem(int) bool { return false }
