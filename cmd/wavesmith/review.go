package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/wavesmith/wavesmith/generators/helm"
	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/internal/review"
	"github.com/wavesmith/wavesmith/manifest"
	"github.com/wavesmith/wavesmith/render"
)

// exitReviewError: review's exit code for usage and render errors, so
// that 1 means differences only (as diff(1) and kubectl diff).
const exitReviewError = 2

func newReviewCommand() *cobra.Command {
	var base, head, format string
	var limit int
	c := &cobra.Command{
		Use:   "review --base REV [--head REV] [PATH]...",
		Short: "Show what a change does to the rendered objects, between two git revisions",
		Long: `Review renders the same inputs at two git revisions and reports the
difference object by object: objects added, removed and changed (a unified
diff each), with the objects whose wave, hook or policy changed summarised
first. It answers the question of a pull request: what does this branch
change in what the cluster will receive?

Each revision is read straight from git's objects (git archive into a
temporary folder): nothing is checked out, and the work tree and the index
are never touched. The head is the work tree (its tracked files and the
untracked ones git does not ignore) unless --head names a revision. Each
side renders as 'wavesmith render PATH...' would in the current folder at
that revision, into a GitOps tree in a temporary folder: the project file,
the lock and every setting are read at that revision, and Flux
Kustomizations and Argo CD Applications the project file asks for are
compared too. Secret values never appear (as in wavesmith diff).

A revision where the current folder (or every PATH) does not exist yet
renders as empty. Two revisions with the same git tree are equal without
rendering. A base the clone lacks (a shallow CI checkout) is an error with
the command that fetches it.

Formats: text (a terminal), markdown (a pull-request comment: a table of
the objects, one collapsed section per object, at most --markdown-limit
bytes with "and N more" past it), json (the same content).

Exit codes: 0 no difference; 1 differences; 2 a usage error, or a revision
that does not render (the message names the revision).`,
		Example: `  # What this branch changes, against main
  wavesmith review --base origin/main

  # Between two commits, as JSON
  wavesmith review --base v1.2.0 --head v1.3.0 --format json

  # In CI, as a comment (GitHub Actions: see docs/tree.md)
  wavesmith review --base origin/${GITHUB_BASE_REF} --format markdown > review.md`,
		RunE: func(c *cobra.Command, args []string) error {
			usage := func(err error) error { return usageError{cmd: c.CommandPath(), err: err} }
			switch format {
			case review.FormatText, review.FormatMarkdown, review.FormatJSON:
			default:
				return usage(fmt.Errorf("--format %q: want %s", format, strings.Join(review.Formats, ", ")))
			}
			if base == "" {
				return usage(errors.New("--base REV is required: the revision to compare with (e.g. origin/main)"))
			}
			for _, a := range args {
				if a == "" || a == "-" || filepath.IsAbs(a) {
					return usage(fmt.Errorf("PATH %q: want a path relative to the current folder, inside the repository", a))
				}
			}
			rep, err := reviewRevisions(c.Context(), base, head, args, render.NewMemo(helm.LockFile))
			if err != nil {
				fmt.Fprintf(c.ErrOrStderr(), "error: %v\n", err)
				return silentError{code: exitReviewError}
			}
			w := c.OutOrStdout()
			switch format {
			case review.FormatMarkdown:
				err = rep.WriteMarkdown(w, limit)
			case review.FormatJSON:
				err = rep.WriteJSON(w)
			default:
				err = rep.WriteText(w)
			}
			if err != nil {
				return err
			}
			if format != review.FormatText {
				fmt.Fprintln(c.ErrOrStderr(), rep.Summary())
			}
			if !rep.Empty() {
				return silentError{code: exitError}
			}
			return nil
		},
	}
	c.Flags().StringVar(&base, "base", "", "the revision to compare with (required), e.g. origin/main")
	c.Flags().StringVar(&head, "head", "", "the revision with the change (default: the work tree)")
	c.Flags().StringVar(&format, "format", review.FormatText, "text, markdown or json")
	c.Flags().IntVar(&limit, "markdown-limit", review.DefaultMarkdownLimit, "the most bytes a markdown report takes (a pull-request comment's limit)")
	complete(c, "format", review.Formats...)
	return c
}

// reviewMemo is the Memo of the review in progress, which the render
// command passes to the engine (render.Options.Reuse): both revisions
// render in this process, one after the other, and share it.
var reviewMemo atomic.Pointer[render.Memo]

// reviewRevisions renders both sides and compares them. The renders share
// memo (nil: none): a spec unchanged between the revisions, with
// byte-identical inputs, is generated once.
func reviewRevisions(ctx context.Context, base, head string, paths []string, memo *render.Memo) (*review.Report, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	repo, err := review.OpenRepo(ctx, cwd)
	if err != nil {
		return nil, err
	}
	baseCommit, err := repo.Resolve(ctx, base)
	if err != nil {
		return nil, err
	}
	headName, headCommit := "work tree", ""
	if head != "" {
		headName = head
		if headCommit, err = repo.Resolve(ctx, head); err != nil {
			return nil, err
		}
	}
	if same, err := sameTree(ctx, repo, baseCommit, headCommit); err != nil {
		return nil, err
	} else if same {
		return review.Compare(review.Revision{Name: base}, review.Revision{Name: headName})
	}
	// Both revisions render at the same absolute root, one after the
	// other: the generators see the same root, so what they made for the
	// base can serve the head.
	tmp, err := os.MkdirTemp("", "wavesmith-review-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	root := filepath.Join(tmp, "repo")
	reviewMemo.Store(memo)
	defer reviewMemo.Store(nil)
	baseObjs, err := renderRevision(ctx, repo, root, base, baseCommit, paths)
	if err != nil {
		return nil, err
	}
	headObjs, err := renderRevision(ctx, repo, root, headName, headCommit, paths)
	if err != nil {
		return nil, err
	}
	return review.Compare(review.Revision{Name: base, Objects: baseObjs}, review.Revision{Name: headName, Objects: headObjs})
}

// sameTree reports whether the base commit and the head (a commit, or ""
// for the work tree) hold the same files: then they render the same.
func sameTree(ctx context.Context, repo *review.Repo, base, head string) (bool, error) {
	bt, err := repo.Tree(ctx, base)
	if err != nil {
		return false, err
	}
	if head == "" {
		clean, err := repo.Clean(ctx)
		if err != nil || !clean {
			return false, err
		}
		head = "HEAD"
	}
	ht, err := repo.Tree(ctx, head)
	if err != nil {
		return false, nil // a repository without commits yet: render
	}
	return bt == ht, nil
}

// renderRevision materialises a revision (commit "" is the work tree) in
// the folder root, which it makes and removes, and renders it there as
// 'wavesmith render PATH... -o DIR' would in the current folder, into a
// temporary tree whose objects it returns; nil when the inputs do not
// exist at that revision.
func renderRevision(ctx context.Context, repo *review.Repo, root, name, commit string, paths []string) ([]*manifest.Object, error) {
	if err := os.Mkdir(root, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	var err error
	if commit == "" {
		err = repo.CopyWorkTree(ctx, root)
	} else {
		err = repo.Extract(ctx, commit, root)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	// What exists at the revision is looked at through its root, as the
	// render reads it.
	r, err := fsroot.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	dir := filepath.Join(root, filepath.FromSlash(repo.Prefix))
	if fi, err := r.Stat(dir); err != nil || !fi.IsDir() {
		return nil, nil // the folder does not exist yet at this revision
	}
	var present []string
	for _, p := range paths {
		if _, err := r.Lstat(filepath.Join(dir, p)); err == nil {
			present = append(present, p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if len(paths) > 0 && len(present) == 0 {
		return nil, nil // none of the inputs exists yet
	}
	// The folder is a repository of its own, as the work tree is: the
	// render finds its root, and the tree's path inside it, as it would
	// there. The tree goes into a hidden folder inside that root, which
	// no input folder loads.
	if _, err := review.Git(ctx, root, "init", "-q"); err != nil {
		return nil, err
	}
	out := filepath.Join(root, ".wavesmith-review", "tree")
	back, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	if err := os.Chdir(dir); err != nil {
		return nil, err
	}
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"render", "-q", "--root", root, "-o", out}, present...), strings.NewReader(""), &stdout, &stderr)
	if err := os.Chdir(back); err != nil {
		return nil, err
	}
	if code != exitOK {
		msg := strings.TrimSpace(strings.ReplaceAll(stderr.String(), root+string(filepath.Separator), ""))
		return nil, fmt.Errorf("%s does not render:\n%s", name, msg)
	}
	objs, err := review.TreeObjects(out)
	if err != nil {
		return nil, fmt.Errorf("%s: reading its render: %w", name, err)
	}
	return objs, nil
}
