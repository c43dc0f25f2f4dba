package hostile

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"sigs.k8s.io/yaml"
)

// The modes a case runs in: the doors of the binary.
const (
	modeStream = "stream" // wavesmith render ARGS (a YAML stream on stdout)
	modeTree   = "tree"   // wavesmith render ARGS -o DIR
	modeFlux   = "flux"   // wavesmith render ARGS -o DIR --flux
	modeArgoCD = "argocd" // wavesmith render ARGS -o DIR --argocd --argocd-repo URL
	modeFn     = "fn"     // wavesmith fn, a ResourceList on stdin
	modePlugin = "plugin" // wavesmith render (no PATH) as Argo CD's plugin runs it, with ARGOCD_* env
	// wavesmith discover . as Argo CD's plugin discovery runs it; only on
	// request (not among the default modes): it lists files, it renders
	// nothing.
	modeDiscover = "discover"
	// wavesmith check ARGS FLAGS (no -o added: give it in flags); only on
	// request: a committed tree and its record are the input.
	modeCheck = "check"
)

var allModes = []string{modeStream, modeTree, modeFlux, modeArgoCD, modePlugin, modeFn}

// treeMode reports whether the mode writes a tree at DIR.
func treeMode(m string) bool { return m == modeTree || m == modeFlux || m == modeArgoCD }

// Case is one testdata/cases/<name>/case.yaml. Next to it, the folder
// holds the case's files: repo/ is the repository the binary runs in
// (its root: sources may not leave it), outside/ lies next to it, outside
// the root; any other file (a stdin, a ResourceList) is copied beside
// them. Symlinks are committed as git symlinks; FIFOs, devices and giant
// files are made at run time by setup steps.
type Case struct {
	// Reason says what the input is and what must happen to it.
	Reason string `json:"reason"`
	// WaitsFor names the fix the case waits for while it fails on main:
	// hostile, helm, kustomize, lead, or unassigned (a documented
	// behaviour nobody is fixing yet). Documentation only: it is printed
	// with a failure and never changes what is asserted.
	WaitsFor string `json:"waitsFor,omitempty"`
	// Modes to run; default: every mode.
	Modes []string `json:"modes,omitempty"`
	// Args are the inputs of the render modes (default "."), relative to
	// repo/. "$ROOT" and "$DIR" expand to the case root and the output
	// folder.
	Args []string `json:"args,omitempty"`
	// NoArgs runs the render and check modes without PATH: the project
	// file repo/.wavesmith.yaml (or check's record) names the inputs, as
	// the plugin mode always runs.
	NoArgs bool `json:"noArgs,omitempty"`
	// Flags are added to every mode but plugin (Argo CD runs a fixed
	// command; use env there).
	Flags []string `json:"flags,omitempty"`
	// Env is added to the environment of every mode.
	Env map[string]string `json:"env,omitempty"`
	// Stdin is the file the render modes read as standard input: relative
	// to the case root, or absolute (/dev/zero).
	Stdin string `json:"stdin,omitempty"`
	// FnInput is the ResourceList of fn mode, relative to the case root;
	// by default it is built from repo/'s top-level files.
	FnInput string `json:"fnInput,omitempty"`
	// FnStdout is "results" (default: a failing fn prints a ResourceList
	// with error results) or "any" (the input is no ResourceList at all,
	// so an empty stdout is also right, as kyaml's framework does).
	FnStdout string `json:"fnStdout,omitempty"`
	// Exit is the expected exit code, or a list of acceptable ones
	// (default 1). ModeExit overrides it per mode.
	Exit     exitCodes            `json:"exit,omitempty"`
	ModeExit map[string]exitCodes `json:"modeExit,omitempty"`
	// Errors must all appear in stderr (fn: in the results or stderr).
	// In fn mode "file.yaml:12" matches "file.yaml" (results carry no
	// line numbers). ModeErrors adds per mode. With Ordered, Errors must
	// appear in the order given (e.g. sorted field paths).
	Errors     []string            `json:"errors,omitempty"`
	Ordered    bool                `json:"ordered,omitempty"`
	ModeErrors map[string][]string `json:"modeErrors,omitempty"`
	// Absent must appear neither in stderr nor in stdout: a leaked
	// secret. "@file:PATH" stands for the first line of that file (e.g.
	// @file:/etc/hostname), read at run time.
	Absent []string `json:"absent,omitempty"`
	// MaxStderr bounds stderr (bytes); default 256 KiB.
	MaxStderr int64 `json:"maxStderr,omitempty"`
	// Output is what lies at DIR before the run: tree (default: a tree
	// wavesmith wrote), none, empty, file, foreign (a folder of the user's),
	// symlink-tree (a symlink to a wavesmith tree elsewhere),
	// symlink-foreign (a symlink to a folder of the user's).
	Output string `json:"output,omitempty"`
	// Dir is DIR relative to the case root (default "out").
	Dir string `json:"dir,omitempty"`
	// Removes lists entries (relative to the case root) a successful run
	// must remove, e.g. stale temporary folders; nothing else outside DIR
	// may change.
	Removes []string `json:"removes,omitempty"`
	// Setup steps run after the files are copied.
	Setup []step `json:"setup,omitempty"`
	// Stdout is a file the binary's standard output goes to instead of
	// the harness (/dev/full: a full disk); nothing is read back from it.
	Stdout string `json:"stdout,omitempty"`
}

// exitCodes is one code or a list.
type exitCodes []int

func (e *exitCodes) UnmarshalJSON(b []byte) error {
	var one int
	if err := json.Unmarshal(b, &one); err == nil {
		*e = exitCodes{one}
		return nil
	}
	var many []int
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("exit: want a code or a list of codes: %w", err)
	}
	*e = many
	return nil
}

func (e exitCodes) has(code int) bool {
	for _, c := range e {
		if c == code {
			return true
		}
	}
	return false
}

// step prepares what cannot be committed: special files and giants.
type step struct {
	// Op: fifo, symlink, write, generate, sparse, tgz-bomb, mkdir, and
	// tmpfs (a tmpfs of Size bytes mounted at Path, unmounted after the
	// run: a mount point, a full disk; it needs root, and fails the case
	// where it cannot mount).
	Op string `json:"op"`
	// Path is relative to the case root.
	Path string `json:"path"`
	// Target of a symlink (verbatim).
	Target string `json:"target,omitempty"`
	// Content of write ("$ROOT" expands to the case root).
	Content string `json:"content,omitempty"`
	// generate writes Head, then Body Count times, then Tail.
	Head  string `json:"head,omitempty"`
	Body  string `json:"body,omitempty"`
	Count int    `json:"count,omitempty"`
	Tail  string `json:"tail,omitempty"`
	// Size of a sparse file (zeros, no disk used), or of the single file
	// of zeros inside a tgz bomb.
	Size int64 `json:"size,omitempty"`
}

// loadCases reads every testdata/cases/*/case.yaml, strictly.
func loadCases(dir string) (map[string]*Case, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	cases := map[string]*Case{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "case.yaml"))
		if err != nil {
			return nil, err
		}
		c := &Case{}
		if err := yaml.UnmarshalStrict(b, c); err != nil {
			return nil, fmt.Errorf("%s/case.yaml: %w", e.Name(), err)
		}
		if err := c.check(); err != nil {
			return nil, fmt.Errorf("%s/case.yaml: %w", e.Name(), err)
		}
		cases[e.Name()] = c
	}
	return cases, nil
}

func (c *Case) check() error {
	if c.Reason == "" {
		return fmt.Errorf("no reason")
	}
	if len(c.Modes) == 0 {
		c.Modes = allModes
	}
	for _, m := range c.Modes {
		if !contains(allModes, m) && m != modeDiscover && m != modeCheck {
			return fmt.Errorf("unknown mode %q", m)
		}
	}
	if len(c.Exit) == 0 {
		c.Exit = exitCodes{1}
	}
	if len(c.Args) == 0 && !c.NoArgs {
		c.Args = []string{"."}
	}
	if len(c.Args) > 0 && c.NoArgs {
		return fmt.Errorf("args and noArgs")
	}
	switch c.Output {
	case "":
		c.Output = "tree"
	case "tree", "none", "empty", "file", "foreign", "symlink-tree", "symlink-foreign":
	default:
		return fmt.Errorf("unknown output %q", c.Output)
	}
	switch c.FnStdout {
	case "":
		c.FnStdout = "results"
	case "results", "any":
	default:
		return fmt.Errorf("unknown fnStdout %q", c.FnStdout)
	}
	if c.Dir == "" {
		c.Dir = "out"
	}
	if c.MaxStderr == 0 {
		c.MaxStderr = 256 << 10
	}
	switch c.WaitsFor {
	case "", "hostile", "helm", "kustomize", "lead", "unassigned":
	default:
		return fmt.Errorf("unknown waitsFor %q", c.WaitsFor)
	}
	if c.expectsFailure() && len(c.Errors) == 0 && len(c.ModeErrors) == 0 {
		return fmt.Errorf("a failing case must name the errors it expects")
	}
	return nil
}

// exitFor is the expected exit codes of a mode.
func (c *Case) exitFor(mode string) exitCodes {
	if e, ok := c.ModeExit[mode]; ok {
		return e
	}
	return c.Exit
}

func (c *Case) expectsFailure() bool { return !c.Exit.has(0) }

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// copyTree copies src into dst, keeping symlinks as symlinks. It learns
// an entry's type from the folder listing, not from lstat: go test keys
// its cached result on what the test process stats, and the cases hold
// symlinks to /dev and /proc, whose times change all the time; go test
// would never reuse the suite's result. The cases' content is part of
// WAVESMITH_TEST_INPUTS (package internal/testtool) instead.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch t := d.Type(); {
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case t.IsDir():
			return os.MkdirAll(to, 0o755)
		case t.IsRegular():
			return copyFile(p, to)
		}
		return fmt.Errorf("%s: cannot copy a %v", p, d.Type())
	})
}

// apply runs one setup step under root.
func (s step) apply(root string) error {
	p := filepath.Join(root, filepath.FromSlash(s.Path))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	switch s.Op {
	case "fifo":
		return syscall.Mkfifo(p, 0o644)
	case "symlink":
		return os.Symlink(s.Target, p)
	case "mkdir":
		return os.MkdirAll(p, 0o755)
	case "write":
		return os.WriteFile(p, []byte(expand(s.Content, root, "")), 0o644)
	case "generate":
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		w := bufio.NewWriterSize(f, 1<<20)
		w.WriteString(s.Head)
		for i := 0; i < s.Count; i++ {
			w.WriteString(s.Body)
		}
		w.WriteString(s.Tail)
		err = w.Flush()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	case "sparse":
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		if _, err := f.WriteString(s.Head); err != nil {
			f.Close()
			return err
		}
		if err := f.Truncate(s.Size); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	case "tgz-bomb":
		return tgzBomb(p, s.Target, s.Size)
	}
	return fmt.Errorf("unknown setup op %q", s.Op)
}

// tgzBomb writes a chart archive whose one template (name) holds size
// zero bytes: a few hundred kilobytes that expand to size.
func tgzBomb(path, name string, size int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	chart := "apiVersion: v2\nname: bomb\nversion: 0.1.0\n"
	files := []struct {
		name string
		size int64
	}{{"bomb/Chart.yaml", int64(len(chart))}, {"bomb/" + name, size}}
	zeros := make([]byte, 1<<20)
	for _, e := range files {
		if err := tw.WriteHeader(&tar.Header{Name: e.name, Mode: 0o644, Size: e.size, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if e.name == "bomb/Chart.yaml" {
			if _, err := tw.Write([]byte(chart)); err != nil {
				return err
			}
			continue
		}
		for n := e.size; n > 0; n -= int64(len(zeros)) {
			if _, err := tw.Write(zeros[:min(n, int64(len(zeros)))]); err != nil {
				return err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// expand replaces $ROOT and $DIR.
func expand(s, root, dir string) string {
	return strings.NewReplacer("$ROOT", root, "$DIR", dir).Replace(s)
}

// copyFile copies a regular file with its permissions (from fstat, which
// go test does not record).
func copyFile(from, to string) error {
	f, err := os.Open(from)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, info.Mode().Perm())
}

// leadsToRegular reports whether p is, or is a symlink to, a regular
// file, like os.Stat but unseen by go test (see copyTree).
func leadsToRegular(p string) bool {
	var st syscall.Stat_t
	return syscall.Stat(p, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG
}
