package outtree

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/wavesmith/wavesmith/internal/fsroot"
)

// errNoExchange: the platform cannot swap two folders atomically.
var errNoExchange = errors.New("atomic exchange not supported")

// errBusy: another process holds the lock.
var errBusy = errors.New("lock held")

// lockName is the lock file of the tree base in its parent folder.
func lockName(base string) string { return "." + base + ".lock" }

// lock takes the lock of the tree base in parent: an exclusive flock on
// .<base>.lock, holding the holder's pid. The lock dies with its process;
// release removes the file, so none is left behind to commit. A file
// removed by its previous holder between our open and our flock is no
// lock: we take it again on the new file. A lock file that is a symbolic
// link is refused, never followed (a dangling one would make us create a
// file at its target).
// With wait, a held lock is waited for until ctx ends instead of failing
// with ErrLocked at once; wait is called once, with the holder, when the
// lock is found held.
func lock(ctx context.Context, parent, base string, wait func(holder string)) (release func() error, err error) {
	p := filepath.Join(parent, lockName(base))
	dir := filepath.Join(parent, base)
	for attempt := 0; ; attempt++ {
		var f *os.File
		var err error = syscall.ELOOP
		if lockOpenFlags != 0 || !isSymlink(p) {
			f, err = os.OpenFile(p, os.O_RDWR|os.O_CREATE|lockOpenFlags, 0o644)
		}
		if fsroot.IsNoFollow(err) {
			return nil, fmt.Errorf("%w: the lock file %s is a symbolic link: remove it (wavesmith never follows one)", ErrWrite, p)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: lock %s: %w", ErrWrite, p, err)
		}
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			f.Close()
			return nil, fmt.Errorf("%w: the lock file %s is not a regular file: remove it", ErrWrite, p)
		}
		err = tryLock(f)
		if wait != nil && errors.Is(err, errBusy) {
			wait(holderOf(f))
		}
		for wait != nil && errors.Is(err, errBusy) {
			t := time.NewTimer(20 * time.Millisecond)
			select {
			case <-ctx.Done():
				t.Stop()
				f.Close()
				return nil, fmt.Errorf("%w: waiting for %s (lock file %s): %w", ErrLocked, dir, p, ctx.Err())
			case <-t.C:
			}
			err = tryLock(f)
		}
		if err != nil {
			if errors.Is(err, errBusy) {
				holder := holderOf(f)
				f.Close()
				return nil, fmt.Errorf("%w: %s is being written by %s (lock file %s); try again when it ends", ErrLocked, dir, holder, p)
			}
			f.Close()
			return nil, fmt.Errorf("%w: lock %s: %v", ErrWrite, p, err)
		}
		held, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%w: lock %s: %v", ErrWrite, p, err)
		}
		now, err := os.Lstat(p)
		if err != nil || !os.SameFile(held, now) {
			f.Close()
			if attempt < 100 {
				continue
			}
			return nil, fmt.Errorf("%w: lock %s keeps being replaced", ErrLocked, p)
		}
		if err := f.Truncate(0); err == nil {
			_, _ = f.WriteAt([]byte(fmt.Sprintf("wavesmith render, pid %d\n", os.Getpid())), 0)
		}
		return func() error {
			rerr := os.Remove(p)
			if cerr := f.Close(); rerr == nil {
				rerr = cerr
			}
			if rerr != nil {
				return fmt.Errorf("releasing the lock %s: %w", p, rerr)
			}
			return nil
		}, nil
	}
}

// silentIfNil is waiting, or a waiting that says nothing: lock waits for
// a held lock only when given one.
func silentIfNil(waiting func(holder string)) func(holder string) {
	if waiting == nil {
		return func(string) {}
	}
	return waiting
}

// isSymlink reports whether p is a symbolic link: where the lock file
// cannot be opened without following one (lockOpenFlags 0), it is
// looked at before the open, and a symlink refused.
func isSymlink(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}

// cannotLock reports whether err says the lock file cannot be made there
// (a read-only checkout, a folder not ours to write): no render can be
// writing there either, so a reader goes on without the lock.
func cannotLock(err error) bool {
	return errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM)
}

// holderOf is who holds the lock file f, as it says.
func holderOf(f *os.File) string {
	if b, _ := io.ReadAll(io.NewSectionReader(f, 0, 100)); len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b))
	}
	return "another process"
}
