// Package outtree writes and reads the GitOps trees a render produces
// (the output tree), without trusting their content: names come from
// objects, a committed tree from a pull request.
//
// Write puts a new tree in place whole (built aside, then renamed or
// exchanged in) and updates an existing one in place, replacing only the
// files whose bytes changed (each renamed over the old one) and removing
// those no longer produced, under a journal (MarkerFile) renamed into the
// tree as its commit point: a kill leaves the old tree, the new one, or a
// tree holding the journal, which Read and OpenFS refuse (ErrInterrupted)
// and the next Write (or Hold) completes. Everything goes through
// descriptors that never leave the folder: a new tree is written by
// several writers, each folder made and opened (O_NOFOLLOW) below its
// parent's descriptor and handed to the writers at once, each file
// created (O_EXCL) below its folder's. Read and OpenFS read a tree back.
//
// WriteIndexed and ReadIndexed take what the caller knows of the tree
// from its last write or check (Known: an Index of each file's lstat
// identity, and the bytes the files held then) and return the new Index:
// a file whose identity is the recorded one, whose times are older than
// the record by RacyMargin (LocalRacyMargin on a local file system with
// nanosecond times; git's racy-clean rule), and whose recorded
// bytes are the ones wanted is stat'd, not read; any other file is read
// and compared. The Index also records each folder's identity, taken
// before it was listed, when it held only recorded entries: adding,
// removing or renaming an entry changes a folder's mtime and ctime, so a
// folder whose identity is the recorded one (and not racy) is not listed
// again, its files are stat'd by path; any other folder is listed, so
// extra and missing files are always found. ctime, which no user can set
// back, tells an edit that kept the size and mtime, of a file or a folder.
// On Linux, macOS and FreeBSD (fastio_unix.go, update_unix.go); elsewhere
// every file is read and a tree is replaced whole. RecordFile marks a folder as a rendered tree (never input again);
// Header starts its kustomization.yaml files.
//
// WriteIn confines the output folder's parents to an anchor (the render's
// root, through fsroot) and makes them there only; the lock file is
// opened with O_NOFOLLOW (a symlink is refused, never followed); a
// cancelled context (SIGINT, SIGTERM) removes the temporary folder and
// the lock. ReadLocked reads a tree under the same lock, so check never
// reads a tree being swapped; Hold takes it before a render reads the
// previous tree and keeps it for WriteHeld.
package outtree
