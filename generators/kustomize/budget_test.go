package kustomize

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/internal/testtool"
	"github.com/wavesmith/wavesmith/internal/tmplsandbox"
	"github.com/wavesmith/wavesmith/manifest"
)

// hostile are templates that would run for hours or take gigabytes
// without the budget. Each is the only file of a templated folder
// besides .component-config.yaml, named cm.yaml, unless it says
// otherwise.
var hostile = map[string]struct {
	reason string
	files  map[string]string
	text   string // in the error
}{
	"Repeat": {
		reason: "repeat of 300 MB is refused before it allocates",
		files:  map[string]string{"cm.yaml": `{{ repeat 300000000 "x" }}`},
		text:   "repeat would return about 300000000 bytes",
	},
	"Until": {
		reason: "until of two billion is refused before it allocates",
		files:  map[string]string{"cm.yaml": `{{ range until 2000000000 }}{{ end }}`},
		text:   "until would return about 16000000000 bytes",
	},
	"UntilStep": {
		reason: "untilStep too",
		files:  map[string]string{"cm.yaml": `{{ range untilStep 0 2000000000 1 }}{{ end }}`},
		text:   "untilStep would return about",
	},
	"NestedRange": {
		reason: "ranges within ranges over one list count every iteration",
		files:  map[string]string{"cm.yaml": `{{ $l := until 100000 }}{{ range $l }}{{ range $l }}{{ range $l }}{{ end }}{{ end }}{{ end }}`},
		text:   "steps (loop iterations, template and function calls)",
	},
	"RangeInt": {
		reason: "range over an integer counts its iterations",
		files:  map[string]string{"cm.yaml": `{{ range 2000000000 }}{{ end }}`},
		text:   "steps (loop iterations, template and function calls)",
	},
	"Doubling": {
		reason: "a string doubled in a loop stops at the value limit",
		files:  map[string]string{"cm.yaml": `{{ $s := "x" }}{{ range until 64 }}{{ $s = cat $s $s }}{{ end }}`},
		text:   "cat would print more than 8388608 bytes",
	},
	"Output": {
		reason: "a template's output is bounded",
		files:  map[string]string{"cm.yaml": `{{ range until 1000000 }}xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx{{ end }}`},
		text:   "output of more than 16777216 bytes",
	},
	"Printf": {
		reason: "a printf width of a billion is refused",
		files:  map[string]string{"cm.yaml": `{{ printf "%0999999999d" 1 }}`},
		text:   "width or precision 999999999",
	},
	"Indent": {
		reason: "indent by a billion spaces is refused",
		files:  map[string]string{"cm.yaml": `{{ indent 1000000000 "x" }}`},
		text:   "indent would return about 1000000001 bytes",
	},
	"IncludeFanOut": {
		reason: "an include calling itself twice stops at the nesting limit",
		files:  map[string]string{"cm.yaml": `{{ define "a" }}{{ include "a" . }}{{ include "a" . }}{{ end }}{{ include "a" . }}`},
		text:   "templates nested more than 1000 deep",
	},
	"TemplateFanOut": {
		reason: "a template calling itself twice counts its calls",
		files:  map[string]string{"cm.yaml": `{{ define "a" }}{{ if lt . 40 }}{{ template "a" (add1 .) }}{{ template "a" (add1 .) }}{{ end }}{{ end }}{{ template "a" 0 }}`},
		text:   "steps (loop iterations, template and function calls)",
	},
	"TplRecursion": {
		reason: "tpl rendering itself stops at the tpl nesting limit",
		files: map[string]string{
			".component-config.yaml": "values:\n  x: '{{ tpl .Values.x . }}'\n",
			"cm.yaml":                `{{ tpl .Values.x . }}`,
		},
		text: "tpl calls nest more than 100 deep",
	},
	"KeepAllocating": {
		reason: "values kept alive in a list stop at the total the functions may return",
		files:  map[string]string{"cm.yaml": `{{ $l := list }}{{ range until 1000 }}{{ $l = append $l (repeat 8000000 "x") }}{{ end }}`},
		text:   "the functions returned and kept more than",
	},
	"Recursion": {
		reason: "a template calling itself stops at the nesting limit",
		files:  map[string]string{"cm.yaml": `{{ define "a" }}{{ template "a" . }}{{ end }}{{ template "a" . }}`},
		text:   "templates nested more than 1000 deep",
	},
	"CyclicDict": {
		reason: "a dict set into itself is refused (printing it would recurse without end)",
		files:  map[string]string{"cm.yaml": `{{ $d := dict }}{{ $_ := set $d "a" $d }}{{ $d }}`},
		text:   "cycle",
	},
	"ReplaceBlowUp": {
		reason: "replace of the empty string by a long one is refused before it allocates",
		files:  map[string]string{"cm.yaml": `{{ $s := repeat 1000000 "x" }}{{ replace "" $s $s }}`},
		text:   "replace would return about",
	},
}

// hostileFolder writes a templated folder with files and returns the
// root and the Component.
func hostileFolder(t testing.TB, files map[string]string) (string, *manifest.Object) {
	t.Helper()
	root := t.TempDir()
	all := map[string]string{".component-config.yaml": "{}\n"}
	for p, s := range files {
		all[p] = s
	}
	for p, s := range all {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, "app", p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "app", p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, newSpec(root, "app", nil)
}

// TestHostileTemplates: each ends with ErrBudget (in ErrTemplate) naming
// the Component and the template file. The step limit is lowered to keep
// the test quick under -race; TestHostileTemplatesCLI runs the real
// limits through the binary.
func TestHostileTemplates(t *testing.T) {
	defer func(old tmplsandbox.Limits) { tmplsandbox.Default = old }(tmplsandbox.Default)
	tmplsandbox.Default.Steps = 1_000_000
	for name, tc := range hostile {
		t.Run(name, func(t *testing.T) {
			root, spec := hostileFolder(t, tc.files)
			start := time.Now()
			_, err := Generator{}.Generate(t.Context(), spec, generators.Options{Root: root})
			t.Logf("%s: %v", name, time.Since(start))
			if !errors.Is(err, ErrBudget) || !errors.Is(err, ErrTemplate) {
				t.Fatalf("%s: want ErrBudget and ErrTemplate, got %v", tc.reason, err)
			}
			var me *manifest.Error
			if !errors.As(err, &me) {
				t.Fatalf("want a *manifest.Error, got %T", err)
			}
			if want := filepath.Join(root, "app", "cm.yaml"); me.File != want {
				t.Errorf("%s: file %q, want %q", tc.reason, me.File, want)
			}
			if me.Object != "Component.wavesmith.io/apps/demo" {
				t.Errorf("%s: object %q", tc.reason, me.Object)
			}
			if !strings.Contains(err.Error(), tc.text) {
				t.Errorf("%s: %q lacks %q", tc.reason, err, tc.text)
			}
		})
	}
}

// stepCtx is a context whose deadline passes after a number of looks at
// Done: a deadline in the middle of a template, at the same point on
// every machine.
type stepCtx struct {
	context.Context
	mu    sync.Mutex
	left  int
	done  chan struct{}
	fired bool
}

func newStepCtx(parent context.Context, looks int) *stepCtx {
	return &stepCtx{Context: parent, left: looks, done: make(chan struct{})}
}

func (c *stepCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.left--; c.left < 0 && !c.fired {
		c.fired = true
		close(c.done)
	}
	return c.done
}

func (c *stepCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fired {
		return context.DeadlineExceeded
	}
	return nil
}

// TestDeadlineInTemplate: a context that ends while a template runs
// stops it with ErrBudget wrapping the context's error, naming the
// template.
func TestDeadlineInTemplate(t *testing.T) {
	root, spec := hostileFolder(t, map[string]string{"cm.yaml": "a: 1\n{{ range until 1000 }}{{ range until 1000 }}{{ end }}{{ end }}\n"})
	ctx := newStepCtx(t.Context(), 5000)
	_, err := Generator{}.Generate(ctx, spec, generators.Options{Root: root})
	if !errors.Is(err, ErrBudget) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want ErrBudget and DeadlineExceeded, got %v", err)
	}
	var me *manifest.Error
	if !errors.As(err, &me) || me.File != filepath.Join(root, "app", "cm.yaml") || me.Line != 2 {
		t.Errorf("want the error at cm.yaml:2, got %v", err)
	}
}

// TestDeadlineBeforeRendering: an expired context stops before kustomize
// runs, with ErrBudget naming the Component.
func TestDeadlineBeforeRendering(t *testing.T) {
	ctx, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel()
	_, err := Generator{}.Generate(ctx, newSpec(fixtures, "overlay", nil), generators.Options{Root: repoRoot})
	var me *manifest.Error
	if !errors.Is(err, ErrBudget) || !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &me) || me.Object != "Component.wavesmith.io/apps/demo" {
		t.Fatalf("want ErrBudget naming the Component, got %v", err)
	}
}

// blockingFS holds kustomize in ReadFile until release is closed.
type blockingFS struct {
	filesys.FileSystem
	entered chan struct{}
	release chan struct{}
	once    *sync.Once
}

func (b blockingFS) ReadFile(p string) ([]byte, error) {
	b.once.Do(func() { close(b.entered) })
	<-b.release
	return b.FileSystem.ReadFile(p)
}

// TestDeadlineInKustomize: a context that ends while kustomize runs
// returns ErrBudget at once; the build finishes in the background and
// frees the build slot for the next one.
func TestDeadlineInKustomize(t *testing.T) {
	fsys := filesys.MakeFsInMemory()
	if err := fsys.WriteFile("/k/kustomization.yaml", []byte("resources: []\n")); err != nil {
		t.Fatal(err)
	}
	b := blockingFS{FileSystem: fsys, entered: make(chan struct{}), release: make(chan struct{}), once: &sync.Once{}}
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := kustomize(ctx, b, "/k")
		errc <- err
	}()
	<-b.entered
	cancel()
	if err := <-errc; !errors.Is(err, ErrBudget) || !errors.Is(err, context.Canceled) {
		t.Fatalf("want ErrBudget wrapping context.Canceled, got %v", err)
	}
	close(b.release)
	generate(t, newSpec(fixtures, "with-components", nil), generators.Options{}) // the slot is free again
}

// TestHostileTemplatesCLI renders each hostile template through the
// wavesmith binary (WAVESMITH_BIN, built by make build) with the real
// limits: it must fail naming the Component and the template, and its
// peak memory (rusage maxrss) must stay under 1 GiB. Times and memory
// are logged.
func TestHostileTemplatesCLI(t *testing.T) {
	bin := testtool.Path(t, "WAVESMITH_BIN", "wavesmith")
	names := make([]string, 0, len(hostile))
	for name := range hostile {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		tc := hostile[name]
		t.Run(name, func(t *testing.T) {
			root, spec := hostileFolder(t, tc.files)
			var b bytes.Buffer
			manifest.Encode(&b, spec.Map)
			if err := os.WriteFile(spec.Source.File, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			msg, exit, rss, cpu := runMeasured(t, bin, "render", spec.Source.File, "--root", root)
			elapsed := time.Since(start)
			if exit == 0 {
				t.Fatalf("%s: want a failing render", tc.reason)
			}
			t.Logf("%-15s wall %6.2fs  cpu %6.2fs  maxrss %4d MiB", name, elapsed.Seconds(), cpu.Seconds(), rss/1024)
			for _, want := range []string{"budget exceeded", tc.text, filepath.Join(root, "app", "cm.yaml"), "Component.wavesmith.io/apps/demo"} {
				if !strings.Contains(msg, want) {
					t.Errorf("%s: stderr %q lacks %q", tc.reason, msg, want)
				}
			}
			if rss >= 1<<20 {
				t.Errorf("%s: peak memory %d MiB, want under 1 GiB", tc.reason, rss/1024)
			}
		})
	}
}

// rssHelperEnv makes the test binary run TestRSSHelper as a helper.
const rssHelperEnv = "WAVESMITH_RSS_HELPER"

// runMeasured runs the command and returns its stderr, exit code, peak
// memory in KiB and CPU time (user and system). It runs it from a fresh helper process (the test
// binary re-executed), because Linux counts the memory of the process a
// child is forked from into the child's maxrss, and the test process is
// large under -race.
func runMeasured(t *testing.T, args ...string) (string, int, int64, time.Duration) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRSSHelper$")
	cmd.Env = append(os.Environ(), rssHelperEnv+"="+strings.Join(args, "\n"))
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("rss helper: %v\n%s", err, stderr.String())
	}
	var exit int
	var rss, cpu int64
	if _, err := fmt.Sscanf(stdout.String(), "exit=%d maxrss=%d cpu=%d", &exit, &rss, &cpu); err != nil {
		t.Fatalf("rss helper said %q: %v", stdout.String(), err)
	}
	return stderr.String(), exit, rss, time.Duration(cpu)
}

// TestRSSHelper is the helper process of runMeasured; run by the test
// itself it has nothing to do.
func TestRSSHelper(t *testing.T) {
	spec := os.Getenv(rssHelperEnv)
	if spec == "" {
		return
	}
	args := strings.Split(spec, "\n")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	err := cmd.Run()
	exit := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		exit = ee.ExitCode()
	case err != nil:
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ps := cmd.ProcessState
	fmt.Printf("exit=%d maxrss=%d cpu=%d", exit, ps.SysUsage().(*syscall.Rusage).Maxrss, int64(ps.UserTime()+ps.SystemTime()))
	os.Exit(0)
}
