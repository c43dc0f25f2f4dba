//go:build unix

package outtree

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lockOpenFlags: the lock file is never a symlink followed, and opening it
// never blocks (a FIFO planted in its place).
const lockOpenFlags = unix.O_NOFOLLOW | unix.O_NONBLOCK

// tryLock takes an exclusive flock on f without waiting.
func tryLock(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return errBusy
		}
		return err
	}
}
