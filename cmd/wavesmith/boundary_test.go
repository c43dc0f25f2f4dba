package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wavesmith/wavesmith/internal/outtree"
)

// canary is the content of every file outside the repository: no
// message may ever show it.
const canary = "CANARY-SECRET-0451"

// boundaryRepo lays out base/repo (a git repository holding deploy/, a
// valid spec, and link -> ../outside) and base/outside (a spec, a
// project file, an api-resources file and a record, each holding the
// canary). It returns repo and outside, and changes into repo.
func boundaryRepo(t *testing.T) (repo, outside string) {
	t.Helper()
	base := t.TempDir()
	repo, outside = filepath.Join(base, "repo"), filepath.Join(base, "outside")
	for p, s := range map[string]string{
		filepath.Join(repo, ".git", "HEAD"):               "ref: refs/heads/main\n",
		filepath.Join(repo, "deploy", "kaoto.yaml"):       kaotoSpec,
		filepath.Join(outside, "kaoto.yaml"):              strings.Replace(kaotoSpec, "designer", "canary-secret-0451", 1) + "# " + canary + "\n",
		filepath.Join(outside, "api.txt"):                 canary + " false X\n",
		filepath.Join(outside, "config.yaml"):             "apiVersion: wavesmith.io/v1alpha1\nkind: RenderConfig\nspec: {platform: " + canary + "}\n",
		filepath.Join(outside, outtree.RecordFile):        "apiVersion: wavesmith.io/v1alpha1\nkind: RenderConfig\nspec: {platform: " + canary + "}\n",
		filepath.Join(outside, "tree", "secret.yaml"):     canary + "\n",
		filepath.Join(outside, "project", ".keep"):        "",
		filepath.Join(outside, "project", "cfg", ".keep"): "",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../outside", filepath.Join(repo, "link")); err != nil {
		t.Fatal(err)
	}
	setEnv(t, nil)
	t.Chdir(repo)
	return repo, outside
}

// listing is every entry below dir, for "nothing changed outside".
func listing(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		out = append(out, p+" "+fi.Mode().String())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// TestBoundary walks every setting that holds a path, in every door
// that has it, and tries "..", an absolute path outside and a symlink
// out of the repository: each is refused, no file outside is read (no
// canary in any message) or written.
//
// Doors and settings: flags (PATH with --root, --api-resources,
// --config, -o with a symlinked parent), the project file (inputs,
// output, apiResources; the file itself), a tree's record (inputs,
// apiResources; the file itself), Argo CD (ARGOCD_APP_SOURCE_PATH; an
// output folder), and the KRM function's functionConfig (apiResources).
// An -o outside the repository by "..", an absolute path or --root are
// the caller's own choice, and allowed (README "One boundary").
func TestBoundary(t *testing.T) {
	type tc struct {
		setup func(t *testing.T, repo, outside string) // files to write before the run
		args  []string
		env   map[string]string
		stdin string
		code  int
		err   string // a substring of stderr (or of stdout for fn)
	}
	project := func(spec string) func(t *testing.T, repo, outside string) {
		return func(t *testing.T, repo, outside string) {
			write(t, filepath.Join(repo, ".wavesmith.yaml"), "apiVersion: wavesmith.io/v1alpha1\nkind: RenderConfig\nspec:\n"+spec)
		}
	}
	record := func(spec string) func(t *testing.T, repo, outside string) {
		return func(t *testing.T, repo, outside string) {
			if code, _, stderr := wavesmith(t, "", "render", "-q", "deploy", "-o", "rendered"); code != 0 {
				t.Fatalf("render: %s", stderr)
			}
			write(t, filepath.Join(repo, "rendered", outtree.RecordFile), "apiVersion: wavesmith.io/v1alpha1\nkind: RenderConfig\nspec:\n  output: .\n"+spec)
		}
	}
	link := func(name, target string) func(t *testing.T, repo, outside string) {
		return func(t *testing.T, repo, outside string) {
			if err := os.Symlink(strings.ReplaceAll(target, "$OUTSIDE", outside), filepath.Join(repo, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	fifo := func(name string) func(t *testing.T, repo, outside string) {
		return func(t *testing.T, repo, outside string) {
			if err := syscall.Mkfifo(filepath.Join(repo, name), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	const outsideErr = "path leaves the repository root"
	cases := map[string]tc{
		// Flags.
		"flags/inputs/dotdot":         {args: []string{"render", "--root", ".", "../outside"}, code: exitError, err: outsideErr},
		"flags/inputs/absolute":       {args: []string{"render", "--root", ".", "$OUTSIDE"}, code: exitError, err: outsideErr},
		"flags/inputs/symlink":        {args: []string{"render", "link"}, code: exitError, err: outsideErr},
		"flags/inputs/empty":          {args: []string{"render", ""}, code: exitUsage, err: "an empty PATH"},
		"flags/apiResources/dotdot":   {args: []string{"render", "deploy", "--api-resources", "../outside/api.txt"}, code: exitUsage, err: "--api-resources: " + outsideErr},
		"flags/apiResources/absolute": {args: []string{"render", "deploy", "--api-resources", "$OUTSIDE/api.txt"}, code: exitUsage, err: "--api-resources: " + outsideErr},
		"flags/apiResources/symlink":  {args: []string{"render", "deploy", "--api-resources", "link/api.txt"}, code: exitUsage, err: "--api-resources: " + outsideErr},
		"flags/config/dotdot":         {args: []string{"render", "--config", "../outside/config.yaml"}, code: exitUsage, err: outsideErr},
		"flags/config/absolute":       {args: []string{"render", "--config", "$OUTSIDE/config.yaml"}, code: exitUsage, err: outsideErr},
		"flags/config/symlink":        {args: []string{"render", "--config", "link/config.yaml"}, code: exitUsage, err: outsideErr},
		"flags/config/empty":          {args: []string{"render", "--config", ""}, code: exitUsage, err: "--config is empty"},
		"flags/root/empty":            {args: []string{"render", "--root", ""}, code: exitUsage, err: "--root is empty"},
		"flags/output/symlink":        {args: []string{"render", "deploy", "-o", "link/rendered"}, code: exitError, err: outsideErr},
		"flags/output/symlink-deep":   {args: []string{"render", "deploy", "-o", "link/a/b/rendered"}, code: exitError, err: outsideErr},
		"flags/output/empty":          {args: []string{"render", "deploy", "-o", ""}, code: exitUsage, err: "-o is empty"},
		"flags/check-output/empty":    {args: []string{"check", "-o", ""}, code: exitUsage, err: "-o is empty"},
		// The project file.
		"project/inputs/dotdot":         {setup: project("  inputs: [../outside]\n"), args: []string{"render"}, code: exitUsage, err: ".wavesmith.yaml: spec.inputs: " + outsideErr},
		"project/inputs/absolute":       {setup: project("  inputs: [$OUTSIDE]\n"), args: []string{"render"}, code: exitUsage, err: ".wavesmith.yaml: spec.inputs: " + outsideErr},
		"project/inputs/symlink":        {setup: project("  inputs: [link]\n"), args: []string{"render"}, code: exitUsage, err: ".wavesmith.yaml: spec.inputs: " + outsideErr},
		"project/output/dotdot":         {setup: project("  inputs: [deploy]\n  output: ../outside/new\n"), args: []string{"render"}, code: exitUsage, err: ".wavesmith.yaml: spec.output: " + outsideErr},
		"project/output/absolute":       {setup: project("  inputs: [deploy]\n  output: $OUTSIDE/new\n"), args: []string{"render"}, code: exitUsage, err: ".wavesmith.yaml: spec.output: " + outsideErr},
		"project/output/symlink":        {setup: project("  inputs: [deploy]\n  output: link/new\n"), args: []string{"render"}, code: exitUsage, err: ".wavesmith.yaml: spec.output: " + outsideErr},
		"project/check-output/dotdot":   {setup: project("  output: ../outside/tree\n"), args: []string{"check"}, code: exitUsage, err: ".wavesmith.yaml: spec.output: " + outsideErr},
		"project/check-output/symlink":  {setup: project("  output: link/tree\n"), args: []string{"check"}, code: exitUsage, err: ".wavesmith.yaml: spec.output: " + outsideErr},
		"project/apiResources/dotdot":   {setup: project("  apiResources: ../outside/api.txt\n"), args: []string{"render"}, code: exitUsage, err: ".wavesmith.yaml: spec.apiResources: " + outsideErr},
		"project/apiResources/absolute": {setup: project("  apiResources: $OUTSIDE/api.txt\n"), args: []string{"render"}, code: exitUsage, err: ".wavesmith.yaml: spec.apiResources: " + outsideErr},
		"project/apiResources/symlink":  {setup: project("  apiResources: link/api.txt\n"), args: []string{"render"}, code: exitUsage, err: ".wavesmith.yaml: spec.apiResources: " + outsideErr},
		"project/file/symlink":          {setup: link(".wavesmith.yaml", "../outside/config.yaml"), args: []string{"render"}, code: exitUsage, err: outsideErr},
		"project/file/absolute-symlink": {setup: link(".wavesmith.yaml", "$OUTSIDE/config.yaml"), args: []string{"render"}, code: exitUsage, err: outsideErr},
		"project/file/dev-zero":         {setup: link(".wavesmith.yaml", "/dev/zero"), args: []string{"render"}, code: exitUsage, err: ".wavesmith.yaml"},
		"project/file/fifo":             {setup: fifo(".wavesmith.yaml"), args: []string{"render"}, code: exitUsage, err: "named pipe"},
		// A tree's record.
		"record/inputs/dotdot":         {setup: record("  inputs: [../../outside]\n"), args: []string{"check", "-o", "rendered"}, code: exitUsage, err: "spec.inputs: " + outsideErr},
		"record/inputs/absolute":       {setup: record("  inputs: [$OUTSIDE]\n"), args: []string{"check", "-o", "rendered"}, code: exitUsage, err: "spec.inputs: " + outsideErr},
		"record/inputs/symlink":        {setup: record("  inputs: [../link]\n"), args: []string{"check", "-o", "rendered"}, code: exitUsage, err: "spec.inputs: " + outsideErr},
		"record/apiResources/dotdot":   {setup: record("  inputs: [../deploy]\n  apiResources: ../../outside/api.txt\n"), args: []string{"check", "-o", "rendered"}, code: exitUsage, err: "spec.apiResources: " + outsideErr},
		"record/apiResources/absolute": {setup: record("  inputs: [../deploy]\n  apiResources: $OUTSIDE/api.txt\n"), args: []string{"check", "-o", "rendered"}, code: exitUsage, err: "spec.apiResources: " + outsideErr},
		"record/apiResources/symlink":  {setup: record("  inputs: [../deploy]\n  apiResources: ../link/api.txt\n"), args: []string{"check", "-o", "rendered"}, code: exitUsage, err: "spec.apiResources: " + outsideErr},
		"record/file/symlink": {setup: func(t *testing.T, repo, outside string) {
			record("")(t, repo, outside)
			os.Remove(filepath.Join(repo, "rendered", outtree.RecordFile))
			link(filepath.Join("rendered", outtree.RecordFile), "../../outside/"+outtree.RecordFile)(t, repo, outside)
		}, args: []string{"check", "-o", "rendered"}, code: exitUsage, err: outsideErr},
		"record/file/fifo": {setup: func(t *testing.T, repo, outside string) {
			record("")(t, repo, outside)
			os.Remove(filepath.Join(repo, "rendered", outtree.RecordFile))
			fifo(filepath.Join("rendered", outtree.RecordFile))(t, repo, outside)
		}, args: []string{"check", "-o", "rendered"}, code: exitUsage, err: "named pipe"},
		// Argo CD.
		"argocd/source-path/dotdot":   {env: map[string]string{"ARGOCD_APP_NAME": "a", "ARGOCD_APP_SOURCE_PATH": "../outside"}, args: []string{"render"}, code: exitUsage, err: "ARGOCD_APP_SOURCE_PATH"},
		"argocd/source-path/absolute": {env: map[string]string{"ARGOCD_APP_NAME": "a", "ARGOCD_APP_SOURCE_PATH": "$OUTSIDE"}, args: []string{"render"}, code: exitUsage, err: "ARGOCD_APP_SOURCE_PATH"},
		"argocd/source-path/other":    {env: map[string]string{"ARGOCD_APP_NAME": "a", "ARGOCD_APP_SOURCE_PATH": "apps/x"}, args: []string{"render"}, code: exitUsage, err: "does not end in it"},
		"argocd/output/project": {setup: project("  inputs: [deploy]\n  output: rendered\n"), env: map[string]string{"ARGOCD_APP_NAME": "a", "ARGOCD_APP_SOURCE_PATH": "."},
			args: []string{"render"}, code: exitUsage, err: ".wavesmith.yaml: spec.output: under Argo CD"},
		"argocd/output/flag": {env: map[string]string{"ARGOCD_APP_NAME": "a", "ARGOCD_APP_SOURCE_PATH": "."}, args: []string{"render", "deploy", "-o", "rendered"}, code: exitUsage, err: "-o: under Argo CD"},
		"argocd/project/inputs": {setup: project("  inputs: [../outside]\n"), env: map[string]string{"ARGOCD_APP_NAME": "a", "ARGOCD_APP_SOURCE_PATH": "."},
			args: []string{"render"}, code: exitUsage, err: "spec.inputs: " + outsideErr},
		"argocd/empty-render": {setup: func(t *testing.T, repo, outside string) {
			write(t, filepath.Join(repo, "empty", "none.yaml"), "# nothing\n")
		},
			env: map[string]string{"ARGOCD_APP_NAME": "a", "ARGOCD_APP_SOURCE_PATH": "."}, args: []string{"render", "empty"}, code: exitError, err: "error:"},
		// The KRM function's functionConfig.
		"fn/apiResources/dotdot":  {args: []string{"fn"}, stdin: fnInput("../outside/api.txt"), code: exitError, err: outsideErr},
		"fn/apiResources/symlink": {args: []string{"fn"}, stdin: fnInput("link/api.txt"), code: exitError, err: outsideErr},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			repo, outside := boundaryRepo(t)
			env := map[string]string{}
			for k, v := range c.env {
				env[k] = strings.ReplaceAll(v, "$OUTSIDE", outside)
			}
			setEnv(t, env)
			if c.setup != nil {
				c.setup(t, repo, outside)
				if fi, err := os.Lstat(filepath.Join(repo, ".wavesmith.yaml")); err == nil && fi.Mode().IsRegular() {
					b, _ := os.ReadFile(filepath.Join(repo, ".wavesmith.yaml"))
					write(t, filepath.Join(repo, ".wavesmith.yaml"), strings.ReplaceAll(string(b), "$OUTSIDE", outside))
				}
				if fi, err := os.Lstat(filepath.Join(repo, "rendered", outtree.RecordFile)); err == nil && fi.Mode().IsRegular() {
					b, _ := os.ReadFile(filepath.Join(repo, "rendered", outtree.RecordFile))
					write(t, filepath.Join(repo, "rendered", outtree.RecordFile), strings.ReplaceAll(string(b), "$OUTSIDE", outside))
				}
			}
			before := listing(t, outside)
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = strings.ReplaceAll(a, "$OUTSIDE", outside)
			}
			code, stdout, stderr := wavesmith(t, strings.ReplaceAll(c.stdin, "$OUTSIDE", outside), args...)
			if code != c.code {
				t.Errorf("exit %d, want %d\nstderr: %s", code, c.code, stderr)
			}
			if !strings.Contains(stderr+stdout, c.err) {
				t.Errorf("stderr %q, want %q", stderr, c.err)
			}
			if strings.Contains(strings.ToUpper(stdout+stderr), canary) {
				t.Errorf("a file outside was read:\nstdout: %s\nstderr: %s", stdout, stderr)
			}
			if args[0] != "fn" && stdout != "" {
				t.Errorf("a failure printed on stdout: %s", stdout)
			}
			if diff := strings.Join(listing(t, outside), "\n"); diff != strings.Join(before, "\n") {
				t.Errorf("outside changed:\n%s", diff)
			}
		})
	}
}

// fnInput is a ResourceList whose RenderConfig functionConfig names an
// api-resources file.
func fnInput(apiResources string) string {
	return "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- " + strings.ReplaceAll(strings.TrimSpace(kaotoSpec), "\n", "\n  ") +
		"\nfunctionConfig:\n  apiVersion: wavesmith.io/v1alpha1\n  kind: RenderConfig\n  metadata: {name: fc}\n  spec:\n    apiResources: " + apiResources + "\n"
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestOutputOutsideByTheCaller: -o outside the repository, by ".." or an
// absolute path, is the caller's choice: written there.
func TestOutputOutsideByTheCaller(t *testing.T) {
	_, outside := boundaryRepo(t)
	for _, out := range []string{"../outside/by-dotdot", filepath.Join(outside, "by-absolute")} {
		if code, _, stderr := wavesmith(t, "", "render", "-q", "deploy", "-o", out); code != exitOK {
			t.Errorf("-o %s: exit %d: %s", out, code, stderr)
		}
	}
}

// TestDanglingLockSymlink: a .out.lock symlink pointing outside makes the
// render fail without creating its target.
func TestDanglingLockSymlink(t *testing.T) {
	repo, outside := boundaryRepo(t)
	if err := os.Symlink("../outside/created-by-lock", filepath.Join(repo, ".rendered.lock")); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := wavesmith(t, "", "render", "-q", "deploy", "-o", "rendered")
	if code != exitError || !strings.Contains(stderr, "symbolic link") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	if _, err := os.Lstat(filepath.Join(outside, "created-by-lock")); !os.IsNotExist(err) {
		t.Errorf("the lock's target was created: %v", err)
	}
}

// TestRenderWaitsForTheTree: render -o takes the tree's lock before it
// reads the previous tree (Flux handoffs, the stat record) and keeps it
// to the write: while another render holds it, render waits (it neither
// fails nor reads a tree being updated), saying for whom, then writes
// what the tree then held asks for. check waits the same way, saying so.
func TestRenderWaitsForTheTree(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tree")
	args := []string{"render", examples, "--flux", "--tree-path", "tree", "-o", dir}
	if code, _, stderr := wavesmith(t, "", args...); code != exitOK {
		t.Fatalf("first render: exit %d: %s", code, stderr)
	}
	for _, cmd := range [][]string{args, {"check", examples, "--flux", "--tree-path", "tree", "-o", dir}} {
		release, err := outtree.WaitLock(context.Background(), dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		type result struct {
			code   int
			stderr string
		}
		done := make(chan result, 1)
		go func() {
			var out, errb bytes.Buffer
			code := run(cmd, strings.NewReader(""), &out, &errb)
			done <- result{code, errb.String()}
		}()
		select {
		case r := <-done:
			_ = release()
			t.Fatalf("%s ended while the tree was locked: exit %d: %s", cmd[0], r.code, r.stderr)
		case <-time.After(500 * time.Millisecond):
		}
		if err := release(); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-done:
			if r.code != exitOK {
				t.Errorf("%s after the lock was released: exit %d: %s", cmd[0], r.code, r.stderr)
			}
			if want := fmt.Sprintf("waiting for %s: wavesmith render, pid %d holds it", dir, os.Getpid()); !strings.Contains(r.stderr, want) {
				t.Errorf("%s did not say it waits (%q): %s", cmd[0], want, r.stderr)
			}
		case <-time.After(2 * time.Minute):
			t.Fatalf("%s did not end after the lock was released", cmd[0])
		}
	}
}

// TestInterruptCleansUp sends SIGINT to the process while a tree is being
// written (the lock held, the new tree aside): the lock and the temporary
// folder are removed, the previous state kept, the exit code non-zero.
func TestInterruptCleansUp(t *testing.T) {
	repo, _ := boundaryRepo(t)
	var during []string
	outtree.TestHookBeforeSwap = func(ctx context.Context) {
		during = names(t, repo)
		if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
			t.Error(err)
		}
		<-ctx.Done()
	}
	defer func() { outtree.TestHookBeforeSwap = nil }()
	code, _, stderr := wavesmith(t, "", "render", "-q", "deploy", "-o", "rendered")
	if code != exitError || !strings.Contains(stderr, "interrupted") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	if !contains(during, ".rendered.lock") {
		t.Errorf("the hook ran without the lock: %v", during)
	}
	for _, n := range names(t, repo) {
		if strings.HasPrefix(n, ".rendered") || n == "rendered" {
			t.Errorf("left after SIGINT: %s", n)
		}
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// fullWriter fails every write, as /dev/full does (ENOSPC).
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// TestWriteErrorsFail: a command whose standard output cannot be written
// (discover > /dev/full) exits non-zero, saying so.
func TestWriteErrorsFail(t *testing.T) {
	repo, _ := boundaryRepo(t)
	write(t, filepath.Join(repo, "deploy", ".wavesmith.yaml"), "")
	for _, args := range [][]string{{"discover", "deploy"}, {"render", "-q", "deploy"}, {"graph", "-q", "deploy"}} {
		var stderr strings.Builder
		code := run(args, strings.NewReader(""), fullWriter{}, &stderr)
		if code == exitOK || !strings.Contains(stderr.String(), "no space left on device") {
			t.Errorf("%v to a full device: exit %d, stderr %q", args, code, stderr.String())
		}
	}
}

// TestOutputNewParentsOutside: -o outside the repository whose parents do
// not exist yet: they are made.
func TestOutputNewParentsOutside(t *testing.T) {
	_, outside := boundaryRepo(t)
	out := filepath.Join(outside, "new", "deeper", "out")
	if code, _, stderr := wavesmith(t, "", "render", "-q", "deploy", "-o", out); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, outtree.RecordFile)); err != nil {
		t.Error(err)
	}
}
