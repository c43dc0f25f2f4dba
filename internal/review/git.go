package review

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// ErrRevision is wrapped by every error about a revision: unknown, or
// missing from a shallow clone.
var ErrRevision = errors.New("unknown revision")

// ErrArchive is wrapped when a revision's files cannot be extracted: an
// entry that would leave the folder, an unsupported entry type, or a
// revision over the size budget.
var ErrArchive = errors.New("revision not extractable")

// Budgets of one extracted revision: a repository larger than this is no
// input a render reads whole anyway.
const (
	MaxRevisionBytes   = 1 << 30
	MaxRevisionEntries = 200000
)

// Repo is the git repository a review runs in.
type Repo struct {
	// Top is the work tree's top folder.
	Top string
	// Prefix is the folder the review was started in, relative to Top
	// ("" at the top, else ending in "/").
	Prefix string
}

// OpenRepo finds the repository holding dir.
func OpenRepo(ctx context.Context, dir string) (*Repo, error) {
	out, err := git(ctx, dir, nil, "rev-parse", "--show-toplevel", "--show-prefix")
	if err != nil {
		return nil, fmt.Errorf("review compares git revisions: %s is not inside a git work tree: %w", dir, err)
	}
	lines := strings.SplitN(strings.TrimRight(string(out), "\n"), "\n", 2)
	r := &Repo{Top: lines[0]}
	if len(lines) > 1 {
		r.Prefix = lines[1]
	}
	return r, nil
}

// Resolve returns the commit rev names. A revision the clone lacks is
// ErrRevision, with the command that fetches it: a CI checkout is often
// shallow and holds only the head.
func (r *Repo) Resolve(ctx context.Context, rev string) (string, error) {
	if rev == "" || strings.HasPrefix(rev, "-") {
		return "", fmt.Errorf("%w: %q is no revision", ErrRevision, rev)
	}
	out, err := git(ctx, r.Top, nil, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err == nil {
		return strings.TrimSpace(string(out)), nil
	}
	shallow, _ := git(ctx, r.Top, nil, "rev-parse", "--is-shallow-repository")
	if strings.TrimSpace(string(shallow)) == "true" {
		return "", fmt.Errorf("%w: %s is not in this shallow clone: fetch it first, e.g. 'git fetch --no-tags --depth=1 origin %s' (or 'git fetch --unshallow')", ErrRevision, rev, rev)
	}
	return "", fmt.Errorf("%w: %s is not a commit of this repository (fetch it first, e.g. 'git fetch origin %s')", ErrRevision, rev, rev)
}

// Tree returns the tree object of commit.
func (r *Repo) Tree(ctx context.Context, commit string) (string, error) {
	out, err := git(ctx, r.Top, nil, "rev-parse", "--verify", commit+"^{tree}")
	return strings.TrimSpace(string(out)), err
}

// Clean reports whether the work tree and index equal HEAD, untracked
// files that are not ignored included.
func (r *Repo) Clean(ctx context.Context) (bool, error) {
	out, err := git(ctx, r.Top, nil, "status", "--porcelain", "--untracked-files=normal")
	return len(bytes.TrimSpace(out)) == 0, err
}

// Extract writes the files of commit into dst (an empty folder) straight
// from git's objects, through git archive: no checkout, the work tree and
// the index are untouched. Entries are regular files, folders and
// symlinks; anything leaving dst is ErrArchive, and so is a revision over
// MaxRevisionBytes or MaxRevisionEntries. Symlinks are written as they
// are: the render's root refuses those that leave it.
func (r *Repo) Extract(ctx context.Context, commit, dst string) error {
	root, err := os.OpenRoot(dst)
	if err != nil {
		return err
	}
	defer root.Close()
	cmd := exec.CommandContext(ctx, "git", "-C", r.Top, "archive", "--format=tar", commit)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("git archive %s: %w", commit, err)
	}
	xerr := extract(root, pipe)
	if xerr != nil {
		_ = cmd.Process.Kill()
	}
	_, _ = io.Copy(io.Discard, pipe)
	werr := cmd.Wait()
	if xerr != nil {
		return fmt.Errorf("%w: %s: %v", ErrArchive, commit, xerr)
	}
	if werr != nil {
		return fmt.Errorf("git archive %s: %v: %s", commit, werr, strings.TrimSpace(stderr.String()))
	}
	return nil
}

func extract(root *os.Root, rd io.Reader) error {
	tr := tar.NewReader(rd)
	var total int64
	for n := 0; ; n++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if n >= MaxRevisionEntries {
			return fmt.Errorf("more than %d entries", MaxRevisionEntries)
		}
		name := path.Clean(h.Name)
		if name == "." || h.Typeflag == tar.TypeXGlobalHeader {
			continue
		}
		if path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("entry %q leaves the folder", h.Name)
		}
		local := filepath.FromSlash(name)
		if dir := filepath.Dir(local); dir != "." {
			if err := root.MkdirAll(dir, 0o755); err != nil {
				return err
			}
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := root.MkdirAll(local, 0o755); err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := root.Symlink(h.Linkname, local); err != nil {
				return err
			}
		case tar.TypeReg:
			total += h.Size
			if total > MaxRevisionBytes {
				return fmt.Errorf("more than %d bytes", MaxRevisionBytes)
			}
			mode := os.FileMode(0o644)
			if h.Mode&0o111 != 0 {
				mode = 0o755
			}
			f, err := root.OpenFile(local, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, io.LimitReader(tr, h.Size))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		default:
			return fmt.Errorf("entry %q: unsupported type %q", h.Name, h.Typeflag)
		}
	}
}

// Git runs git in dir and returns its standard output.
func Git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return git(ctx, dir, nil, args...)
}

// git runs git in dir and returns its standard output; a failure carries
// its standard error.
func git(ctx context.Context, dir string, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Stdin = stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return out, fmt.Errorf("git %s: %w: %s", args[0], err, msg)
		}
		return out, fmt.Errorf("git %s: %w", args[0], err)
	}
	return out, nil
}
