package load

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/manifest"
)

func TestLoadSymlinkLoop(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..", filepath.Join(dir, "a", "loop")); err != nil {
		t.Fatal(err)
	}
	_, err := loadIn(dir, []string{dir}, nil)
	if !errors.Is(err, ErrSymlinkLoop) {
		t.Fatalf("want ErrSymlinkLoop, got %v", err)
	}
}

func TestLoadSkipsSources(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\n"
	write("b.yaml", strings.Replace(cm, "%s", "b", 1))
	write("a/a.yml", strings.Replace(cm, "%s", "a", 1))
	write("c.json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`)
	write("kustomization.yaml", "resources: [b.yaml]\n")
	write("chart/Chart.yaml", "name: x\n")
	write("chart/templates/t.yaml", "{{ .Values.x }}\n")
	write(".git/x.yaml", "not: an object\n")
	write("README.md", "# hi\n")
	objs, err := loadIn(dir, []string{dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.Name())
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, names); diff != "" {
		t.Errorf("objects in lexical file order, sources skipped: -want +got:\n%s", diff)
	}
}

// TestLoadConfined: nothing is read outside the root, through symlinks
// neither; only regular files, under a size cap, without blocking.
func TestLoadConfined(t *testing.T) {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\n"
	cases := map[string]struct {
		reason string
		setup  func(t *testing.T, root, outside string) // root holds in/
		args   []string                                 // relative to root; default in
		want   []string                                 // names loaded
		err    error
		text   string
	}{
		"InsideLink": {
			reason: "a relative symlink inside the root is read",
			setup: func(t *testing.T, root, _ string) {
				writeFile(t, filepath.Join(root, "shared", "a.yaml"), strings.Replace(cm, "%s", "a", 1))
				symlink(t, "../shared/a.yaml", filepath.Join(root, "in", "a.yaml"))
			},
			want: []string{"a"},
		},
		"FileOutside": {
			reason: "evil.yaml -> a Secret outside the root",
			setup: func(t *testing.T, root, outside string) {
				symlink(t, filepath.Join(outside, "secret.yaml"), filepath.Join(root, "in", "evil.yaml"))
			},
			err: fsroot.ErrOutsideRoot, text: "evil.yaml",
		},
		"RelativeOutside": {
			reason: "a relative symlink climbing out",
			setup: func(t *testing.T, root, outside string) {
				symlink(t, "../../outside/secret.yaml", filepath.Join(root, "in", "evil.yaml"))
			},
			err: fsroot.ErrOutsideRoot, text: "evil.yaml",
		},
		"FolderOutside": {
			reason: "a folder symlinked outside",
			setup: func(t *testing.T, root, outside string) {
				symlink(t, outside, filepath.Join(root, "in", "more"))
			},
			err: fsroot.ErrOutsideRoot, text: "more",
		},
		"DevZero": {
			reason: "a symlink to /dev/zero is refused, not read forever",
			setup: func(t *testing.T, root, _ string) {
				symlink(t, "/dev/zero", filepath.Join(root, "in", "zero.yaml"))
			},
			err: fsroot.ErrOutsideRoot, text: "zero.yaml",
		},
		"FIFO": {
			reason: "a FIFO is refused at once",
			setup: func(t *testing.T, root, _ string) {
				if err := syscall.Mkfifo(filepath.Join(root, "in", "fifo.yaml"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			err: fsroot.ErrNotRegular, text: "fifo.yaml",
		},
		"FIFOArgument": {
			reason: "a FIFO given as an argument is refused at once",
			setup: func(t *testing.T, root, _ string) {
				if err := syscall.Mkfifo(filepath.Join(root, "in", "fifo.yaml"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			args: []string{"in/fifo.yaml"},
			err:  fsroot.ErrNotRegular, text: "fifo.yaml",
		},
		"TooLarge": {
			reason: "a file over the size cap",
			setup: func(t *testing.T, root, _ string) {
				f, err := os.Create(filepath.Join(root, "in", "big.yaml"))
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if err := f.Truncate(fsroot.MaxFileSize + 1); err != nil {
					t.Fatal(err)
				}
			},
			err: fsroot.ErrTooLarge, text: "big.yaml",
		},
		"ArgumentOutside": {
			reason: "a path outside the root",
			args:   []string{"../outside/secret.yaml"},
			err:    fsroot.ErrOutsideRoot, text: "secret.yaml",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			base := t.TempDir()
			root, outside := filepath.Join(base, "repo"), filepath.Join(base, "outside")
			writeFile(t, filepath.Join(outside, "secret.yaml"), "apiVersion: v1\nkind: Secret\nmetadata: {name: leaked}\n")
			writeFile(t, filepath.Join(root, "in", "ok.yaml"), strings.Replace(cm, "%s", "ok", 1))
			if tc.setup != nil {
				tc.setup(t, root, outside)
			}
			t.Chdir(root)
			args := tc.args
			if args == nil {
				args = []string{"in"}
			}
			var objs []*manifest.Object
			var err error
			done := make(chan struct{})
			go func() { defer close(done); objs, err = loadIn(root, args, nil) }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("%s: Load blocked", tc.reason)
			}
			if !errors.Is(err, tc.err) {
				t.Fatalf("%s: want %v, got %v", tc.reason, tc.err, err)
			}
			if err != nil {
				if !strings.Contains(err.Error(), tc.text) {
					t.Errorf("%s: the error does not name %s: %v", tc.reason, tc.text, err)
				}
				return
			}
			var names []string
			for _, o := range objs {
				names = append(names, o.Name())
			}
			if diff := cmp.Diff(append([]string{"ok"}, tc.want...), names, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestLoadNeverDropsSpecs: the files a Component reads are left out of
// the render, but never a file holding a spec, and never an error of a
// file that looks like one.
func TestLoadNeverDropsSpecs(t *testing.T) {
	component := func(name, source string, values ...string) string {
		s := "apiVersion: wavesmith.io/v1alpha1\nkind: Component\nmetadata: {name: " + name + ", namespace: demo}\nspec:\n  source: " + source + "\n"
		if len(values) > 0 {
			s += "  valuesFiles: [" + strings.Join(values, ", ") + "]\n"
		}
		return s
	}
	kaoto := "apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata: {name: k, namespace: demo}\n"
	cases := map[string]struct {
		reason string
		files  map[string]string
		want   []string
		err    error
		text   []string
	}{
		"Sources": {
			reason: "a kustomization folder and a values file are sources; a template that does not decode is no error",
			files: map[string]string{
				"c.yaml":           component("c", "{kustomization: {path: kust}}", "values/v.yaml"),
				"kust/deploy.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .name }\n",
				"values/v.yaml":    "replicas: 2\n",
			},
			want: []string{"c"},
		},
		"ChartIsOwnFolder": {
			reason: "a Component whose chart path is . covers its own file",
			files: map[string]string{
				"app/Chart.yaml":     "apiVersion: v2\nname: app\nversion: 0.1.0\n",
				"app/component.yaml": component("own", "{chart: {path: .}}"),
				"other.yaml":         kaoto,
			},
			err:  generators.ErrSourceCoversSpec,
			text: []string{"app/component.yaml", "Component.wavesmith.io/demo/own", "spec.source.chart.path", ". covers"},
		},
		"ValuesIsAnotherSpec": {
			reason: "a valuesFiles entry naming another spec's file",
			files: map[string]string{
				"c.yaml":                  component("c", "{kustomization: {path: kust}}", "k.yaml"),
				"k.yaml":                  kaoto,
				"kust/kustomization.yaml": "resources: []\n",
			},
			err:  generators.ErrSourceCoversSpec,
			text: []string{"c.yaml:", "spec.valuesFiles[0]", "k.yaml, which holds Kaoto.designer.kaoto.io/demo/k"},
		},
		"BaseOfOverlay": {
			reason: "the base an overlay names is the Component's source too, not loose objects",
			files: map[string]string{
				"c.yaml":                           component("c", "{kustomization: {path: overlays/prod}}"),
				"overlays/prod/kustomization.yaml": "resources: [../../base]\n",
				"base/kustomization.yaml":          "resources: [cm.yaml]\n",
				"base/cm.yaml":                     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: base}\n",
			},
			want: []string{"c"},
		},
		"SpecInBase": {
			reason: "a spec in the base an overlay names is an error naming both",
			files: map[string]string{
				"c.yaml":                           component("c", "{kustomization: {path: overlays/prod}}"),
				"overlays/prod/kustomization.yaml": "resources: [../../base]\n",
				"base/kustomization.yaml":          "resources: []\n",
				"base/k.yaml":                      kaoto,
			},
			err:  generators.ErrSourceCoversSpec,
			text: []string{"c.yaml:", "spec.source.kustomization.path", "base covers", "Kaoto.designer.kaoto.io/demo/k"},
		},
		"BrokenSpecInSource": {
			reason: "a broken spec inside a source folder keeps its error",
			files: map[string]string{
				"c.yaml":        component("c", "{kustomization: {path: kust}}"),
				"kust/bad.yaml": "apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata: [\n",
			},
			err:  manifest.ErrSyntax,
			text: []string{"kust/bad.yaml", "Component.wavesmith.io/demo/c reads it as a source"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			for p, s := range tc.files {
				writeFile(t, filepath.Join(root, p), s)
			}
			objs, err := loadIn(root, []string{root}, nil)
			if !errors.Is(err, tc.err) {
				t.Fatalf("%s: want %v, got %v", tc.reason, tc.err, err)
			}
			for _, s := range tc.text {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%s: the error lacks %q: %v", tc.reason, s, err)
				}
			}
			if err != nil {
				return
			}
			var names []string
			for _, o := range objs {
				names = append(names, o.Name())
			}
			if diff := cmp.Diff(tc.want, names); diff != "" {
				t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// loadIn loads with wavesmith's generators.
func loadIn(root string, paths []string, stdin io.Reader) ([]*manifest.Object, error) {
	return Inputs(context.Background(), root, builtin.Registry(), paths, stdin)
}

// TestLoadMissingInput: a missing input is named once, as the user wrote
// it, without the system call (not "nope: statat nope: ...").
func TestLoadMissingInput(t *testing.T) {
	dir := t.TempDir()
	nope := filepath.Join(dir, "nope")
	_, err := loadIn(dir, []string{nope}, nil)
	var me *manifest.Error
	if !errors.Is(err, os.ErrNotExist) || !errors.As(err, &me) || me.File != nope {
		t.Fatalf("want a manifest.Error for nope wrapping os.ErrNotExist, got %v", err)
	}
	if got, want := err.Error(), nope+": no such file or directory"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

// TestLoadEveryPathError: every PATH is checked before any is read: two
// missing ones are both named, and a good one among them does not hide
// them.
func TestLoadEveryPathError(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	_, err := loadIn(dir, []string{b, good, a}, nil)
	var es manifest.Errors
	if !errors.As(err, &es) || len(es) != 2 {
		t.Fatalf("want both missing paths at once, got %v", err)
	}
	for i, want := range []string{a, b} {
		var me *manifest.Error
		if !errors.As(es[i], &me) || me.File != want || !errors.Is(es[i], os.ErrNotExist) {
			t.Errorf("error %d: %v, want %s not found", i, es[i], want)
		}
	}
}

// TestLoadKeepsTheGoodFilesWithErrors: with a file that does not decode,
// Inputs reports it and returns the objects of the files that did (for
// render.Check), never those of the bad file.
func TestLoadKeepsTheGoodFilesWithErrors(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"a.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
		"broken.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\n",
		"c.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	objs, err := loadIn(dir, []string{dir}, nil)
	if !errors.Is(err, manifest.ErrSyntax) {
		t.Fatalf("want the syntax error of broken.yaml, got %v", err)
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.Name())
	}
	if diff := cmp.Diff([]string{"a", "c"}, names); diff != "" {
		t.Errorf("the objects of the good files (-want +got):\n%s", diff)
	}
}
