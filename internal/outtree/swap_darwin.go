package outtree

import (
	"errors"

	"golang.org/x/sys/unix"
)

// exchange swaps the folders a and b atomically (renamex_np with
// RENAME_SWAP). It returns errNoExchange where the file system does not
// support it.
func exchange(a, b string) error {
	err := unix.RenamexNp(a, b, unix.RENAME_SWAP)
	if errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EINVAL) {
		return errNoExchange
	}
	return err
}
