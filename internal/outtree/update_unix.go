//go:build linux || darwin || freebsd

package outtree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"

	"golang.org/x/sys/unix"
)

// update brings the tree at dir (parent/base, a tree wavesmith wrote,
// under the caller's lock) to files in place: only files whose bytes
// differ are replaced (each renamed over the old one), only files no
// longer wanted are removed; the others keep their inode and mtime. The
// new files are written into a staging folder beside the tree first; the
// journal of the update is then renamed into the tree as MarkerFile (the
// commit point), the steps run, and the marker and staging folder are
// removed. A kill before the commit leaves the old tree (and a staging
// folder the next Write removes); after it, the tree holds MarkerFile
// until the next Write finishes the journal. errNoUpdate: dir is missing
// or empty, or its files cannot be read: replace it whole.
//
// A file known (an Index and the bytes then) to hold the bytes wanted is
// stat'd, not read (walkTree). It returns the Index of the tree it
// leaves: the identities of the files kept (as the walk saw them) and of
// the files put (stat'd in place, after their rename).
func update(ctx context.Context, parent, base string, files map[string][]byte, known Known) (*Index, error) {
	dir := filepath.Join(parent, base)
	cur, ws, err := walkTree(dir, files, known)
	if err != nil || len(cur) == 0 && !ws.covered {
		return nil, errNoUpdate
	}
	ix := ws.index(known)
	if ws.same {
		return ix, nil // the tree holds exactly the files wanted
	}
	j, ok := planRead(ws, files)
	if !ok {
		j = plan(ws.tree(cur, files), files)
	}
	if j == nil {
		return ix, nil
	}
	staging, err := os.MkdirTemp(parent, tempPrefix(base))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrWrite, err)
	}
	committed := false
	defer func() {
		if !committed {
			_ = os.RemoveAll(staging)
		}
	}()
	j.staging = filepath.Base(staging)
	sfd, err := unix.Open(staging, openDir, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrWrite, &fs.PathError{Op: "open", Path: staging, Err: err})
	}
	defer unix.Close(sfd)
	if err := stage(ctx, sfd, j.puts, files); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %s: interrupted: %w", ErrWrite, dir, ctx.Err())
		}
		return nil, writeError(dir, err)
	}
	if err := writeNewFd(sfd, "marker", j.encode(), nil); err != nil {
		return nil, writeError(dir, err)
	}
	tfd, err := unix.Open(dir, openDir, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrWrite, &fs.PathError{Op: "open", Path: dir, Err: err})
	}
	defer unix.Close(tfd)
	if TestHookBeforeSwap != nil {
		TestHookBeforeSwap(ctx)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: interrupted: %w", ErrWrite, dir, err)
	}
	if err := unix.Renameat(sfd, "marker", tfd, MarkerFile); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrWrite, dir, err)
	}
	committed = true // from here on, the journal runs to its end
	ix.wrote = len(j.puts) + len(j.dels)
	if err := apply(tfd, sfd, j, ix); err != nil {
		return nil, fmt.Errorf("%w: %s: %w (it holds %s: render again to finish the update)", ErrWrite, dir, err, MarkerFile)
	}
	if err := unix.Unlinkat(tfd, MarkerFile, 0); err != nil {
		return nil, fmt.Errorf("%w: %s: removing %s: %v", ErrWrite, dir, MarkerFile, err)
	}
	if err := os.RemoveAll(staging); err != nil {
		return nil, fmt.Errorf("%w: %s was written, but removing %s: %w", ErrCleanup, dir, staging, err)
	}
	return ix, nil
}

// stage writes the files of puts into the staging folder open as sfd,
// named by their index, with several writers.
func stage(ctx context.Context, sfd int, puts []string, files map[string][]byte) error {
	errs := onWorkers(ctx, len(puts), true, func(i int) error {
		if err := writeNewFd(sfd, stagedName(i), files[puts[i]], nil); err != nil {
			return &fs.PathError{Op: "write", Path: puts[i], Err: err}
		}
		return nil
	})
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return ctx.Err()
}

// apply runs the steps of j on the tree open as tfd, taking the new files
// from the staging folder open as sfd. Every step may have run before (a
// killed update finished again): a file or folder already gone, a folder
// already made, a staged file already moved are skipped. No step follows
// a symlink. With ix, each file put is stat'd in place once renamed (a
// rename changes its ctime) and recorded in ix; a file removed leaves it.
func apply(tfd, sfd int, j *journal, ix *Index) error {
	open := map[string]int{"": tfd}
	defer func() {
		for d, fd := range open {
			if d != "" {
				unix.Close(fd)
			}
		}
	}()
	folder := func(d string) (int, error) {
		if d == "." {
			d = ""
		}
		if fd, ok := open[d]; ok {
			return fd, nil
		}
		fd, err := openBelow(tfd, d)
		if err != nil {
			return -1, err
		}
		open[d] = fd
		return fd, nil
	}
	forget := func() {
		for d, fd := range open {
			if d != "" {
				unix.Close(fd)
				delete(open, d)
			}
		}
	}
	gone := func(err error) bool {
		return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR)
	}
	for _, p := range j.dels {
		fd, err := folder(path.Dir(p))
		if gone(err) {
			continue
		}
		if err != nil {
			return err
		}
		// EISDIR: a later step made a folder there (this journal runs again).
		if err := unix.Unlinkat(fd, path.Base(p), 0); err != nil && !gone(err) && !errors.Is(err, unix.EISDIR) {
			return &fs.PathError{Op: "remove", Path: p, Err: err}
		}
	}
	forget()
	for _, d := range j.rmdirs {
		fd, err := folder(path.Dir(d))
		if gone(err) {
			continue
		}
		if err != nil {
			return err
		}
		err = unix.Unlinkat(fd, path.Base(d), unix.AT_REMOVEDIR)
		if err != nil && !gone(err) && !errors.Is(err, unix.ENOTEMPTY) && !errors.Is(err, unix.EEXIST) {
			return &fs.PathError{Op: "remove", Path: d, Err: err}
		}
	}
	forget()
	for _, d := range j.mkdirs {
		fd, err := folder(path.Dir(d))
		if err != nil {
			return err
		}
		if err := unix.Mkdirat(fd, path.Base(d), 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			return &fs.PathError{Op: "mkdir", Path: d, Err: err}
		}
	}
	for i, p := range j.puts {
		fd, err := folder(path.Dir(p))
		if err != nil {
			return err
		}
		err = unix.Renameat(sfd, stagedName(i), fd, path.Base(p))
		if errors.Is(err, unix.ENOENT) {
			var st unix.Stat_t
			if serr := unix.Fstatat(sfd, stagedName(i), &st, unix.AT_SYMLINK_NOFOLLOW); errors.Is(serr, unix.ENOENT) {
				continue // moved before: this journal runs again
			}
		}
		if err != nil {
			return &fs.PathError{Op: "rename", Path: p, Err: err}
		}
		if ix != nil {
			var st unix.Stat_t
			if err := unix.Fstatat(fd, path.Base(p), &st, unix.AT_SYMLINK_NOFOLLOW); err == nil {
				ix.Files[p] = fileStat(&st)
			} else {
				delete(ix.Files, p)
			}
		}
	}
	if ix != nil {
		for _, p := range j.dels {
			delete(ix.Files, p)
			ix.forget(path.Dir(p))
		}
		for _, p := range j.puts {
			ix.forget(path.Dir(p))
		}
		for _, ds := range [][]string{j.rmdirs, j.mkdirs} {
			for _, d := range ds {
				ix.forget(d)
			}
		}
	}
	return nil
}

// finish completes the update a killed Write left in the tree at
// parent/base (its MarkerFile), under the caller's lock. A marker that
// does not parse, or whose staging folder is gone (a tree committed
// mid-update, a marker written by hand), is only removed: the Write that
// follows compares every file with what it wants anyway. It returns the
// problems it could not solve.
func finish(parent, base string) []error {
	dir := filepath.Join(parent, base)
	tfd, err := unix.Open(dir, openDir, 0)
	if err != nil {
		return nil // no tree (or none to update in place: Write replaces it)
	}
	defer unix.Close(tfd)
	var st unix.Stat_t
	if err := unix.Fstatat(tfd, MarkerFile, &st, unix.AT_SYMLINK_NOFOLLOW); errors.Is(err, unix.ENOENT) {
		return nil
	}
	remove := func() []error {
		if err := unix.Unlinkat(tfd, MarkerFile, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			return []error{fmt.Errorf("removing %s: %w", filepath.Join(dir, MarkerFile), err)}
		}
		return nil
	}
	b, _, err := (&treeReader{dir: dir}).file(tfd, MarkerFile)
	if err != nil {
		return remove()
	}
	j, err := parseJournal(base, b)
	if err != nil {
		return remove()
	}
	staging := filepath.Join(parent, j.staging)
	sfd, err := unix.Open(staging, openDir, 0)
	if err != nil {
		return remove()
	}
	defer unix.Close(sfd)
	if err := apply(tfd, sfd, j, nil); err != nil {
		return []error{fmt.Errorf("finishing the interrupted update of %s: %w", dir, err)}
	}
	return remove()
}

// planRead is plan for a walk that covered the files wanted (walkStats):
// the files it read are the only ones that can differ, so the tree's
// tens of thousands of trusted files are not compared again. ok is false
// when the walk did not cover want or found a file not wanted (a folder
// may then be left empty): plan decides.
func planRead(ws *walkStats, want map[string][]byte) (j *journal, ok bool) {
	if ws == nil || !ws.covered {
		return nil, false
	}
	var puts []string
	for _, f := range ws.readFiles {
		w, wanted := want[f.p]
		if !wanted {
			return nil, false
		}
		if !bytes.Equal(f.b, w) {
			puts = append(puts, f.p)
		}
	}
	if len(puts) == 0 {
		return nil, true
	}
	// Every file wanted is there: no folder to make, none to remove.
	sort.Strings(puts)
	return &journal{puts: puts}, true
}
