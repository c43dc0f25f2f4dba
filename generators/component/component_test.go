package component

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/manifest"
)

func TestResolvePathRefusesSymlinkEscape(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "charts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "charts", "evil")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "charts", "good"), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := manifest.New(map[string]any{"apiVersion": "wavesmith.io/v1alpha1", "kind": "Component", "metadata": map[string]any{"name": "c"}})
	spec.Source.File = filepath.Join(root, "component.yaml")
	if _, err := ResolvePath(spec, "spec.source.chart.path", "charts/evil", root); !errors.Is(err, fsroot.ErrOutsideRoot) {
		t.Errorf("a symlink leaving the root: want fsroot.ErrOutsideRoot, got %v", err)
	}
	if _, err := ResolvePath(spec, "spec.source.chart.path", "../"+filepath.Base(outside), root); !errors.Is(err, fsroot.ErrOutsideRoot) {
		t.Errorf("a relative path leaving the root: want fsroot.ErrOutsideRoot, got %v", err)
	}
	if _, err := ResolvePath(spec, "spec.source.chart.path", "charts/good", root); err != nil {
		t.Errorf("a path inside the root: %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := map[string]struct {
		spec  map[string]any
		field string
	}{
		"NoSource":                 {map[string]any{}, "spec.source"},
		"WrongType":                {map[string]any{"source": map[string]any{"chart": map[string]any{"path": "x"}}, "wave": "soon"}, "spec.wave"},
		"DeepField":                {map[string]any{"source": map[string]any{"chart": map[string]any{"path": "x", "ref": "y"}}}, "spec.source.chart.ref"},
		"EmptyPath":                {map[string]any{"source": map[string]any{"kustomization": map[string]any{"path": ""}}}, "spec.source.kustomization.path"},
		"BadPolicy":                {map[string]any{"source": map[string]any{"chart": map[string]any{"path": "x"}}, "policies": map[string]any{"update": int64(1)}}, "spec.policies.update"},
		"DependsOn":                {map[string]any{"source": map[string]any{"chart": map[string]any{"path": "x"}}, "dependsOn": []any{map[string]any{"nam": "a"}}}, "spec.dependsOn[0].nam"},
		"WaveRange":                {map[string]any{"source": map[string]any{"chart": map[string]any{"path": "x"}}, "wave": int64(40000)}, "spec.wave"},
		"NoHint":                   {map[string]any{"source": map[string]any{"chart": map[string]any{"path": "x"}}, "statusHints": []any{map[string]any{"kind": "Widget"}}}, "spec.statusHints[0].hint"},
		"ScopeValue":               {map[string]any{"source": map[string]any{"chart": map[string]any{"path": "x"}}, "scopes": []any{map[string]any{"kind": "K", "scope": "cluster"}}}, "spec.scopes[0].scope"},
		"ChartPathAndRepo":         {map[string]any{"source": map[string]any{"chart": map[string]any{"path": "x", "repo": "https://c.example"}}}, "spec.source.chart"},
		"ChartOCINoVer":            {map[string]any{"source": map[string]any{"chart": map[string]any{"repo": "oci://r.example/c", "name": "c"}}}, "spec.source.chart.version"},
		"ChartRepoScheme":          {map[string]any{"source": map[string]any{"chart": map[string]any{"repo": "ftp://c.example", "name": "c", "version": "1"}}}, "spec.source.chart.repo"},
		"ChartRepoNoName":          {map[string]any{"source": map[string]any{"chart": map[string]any{"repo": "https://c.example", "version": "1"}}}, "spec.source.chart.name"},
		"ChartRepoNoVer":           {map[string]any{"source": map[string]any{"chart": map[string]any{"repo": "https://c.example", "name": "c"}}}, "spec.source.chart.version"},
		"ChartNothing":             {map[string]any{"source": map[string]any{"chart": map[string]any{}}}, "spec.source.chart.path"},
		"StrictHooksKustomization": {map[string]any{"source": map[string]any{"kustomization": map[string]any{"path": "x"}}, "strictHooks": true}, "spec.strictHooks"},
		"StrictHooksType":          {map[string]any{"source": map[string]any{"chart": map[string]any{"path": "x"}}, "strictHooks": "yes"}, "spec.strictHooks"},
		"ScopeKind":                {map[string]any{"source": map[string]any{"chart": map[string]any{"path": "x"}}, "scopes": []any{map[string]any{"group": "g", "scope": "Cluster"}}}, "spec.scopes[0].kind"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := manifest.New(map[string]any{"apiVersion": "wavesmith.io/v1alpha1", "kind": "Component", "metadata": map[string]any{"name": "c"}, "spec": tc.spec})
			_, err := Decode(spec)
			var me *manifest.Error
			if !errors.Is(err, manifest.ErrInvalid) || !errors.As(err, &me) || me.Field != tc.field {
				t.Errorf("want ErrInvalid at %s, got %v", tc.field, err)
			}
		})
	}
}

// TestUnknownFieldsSorted: every unknown field is reported, sorted, so
// that one input gives one text (it was the first in map order).
func TestUnknownFieldsSorted(t *testing.T) {
	spec := manifest.New(map[string]any{"apiVersion": "wavesmith.io/v1alpha1", "kind": "Component", "metadata": map[string]any{"name": "c"},
		"spec": map[string]any{"source": map[string]any{"chart": map[string]any{"path": "x"}}, "zeta": 1, "alpha": 2, "mid": 3, "beta": 4, "values2": 5, "wave": "soon"}})
	var first string
	for i := range 20 {
		_, err := Decode(spec)
		if err == nil {
			t.Fatal("want an error")
		}
		if i == 0 {
			first = err.Error()
			continue
		}
		if err.Error() != first {
			t.Fatalf("run %d: a different text:\n%s\nwant:\n%s", i, err, first)
		}
	}
	var fields []string
	es, ok := errAs(spec).(manifest.Errors)
	if !ok {
		t.Fatalf("want manifest.Errors, got %q", first)
	}
	for _, e := range es {
		var me *manifest.Error
		if errors.As(e, &me) {
			fields = append(fields, me.Field)
		}
	}
	want := []string{"spec.alpha", "spec.beta", "spec.mid", "spec.values2", "spec.wave", "spec.zeta"}
	if diff := cmp.Diff(want, fields); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}

func errAs(spec *manifest.Object) error {
	_, err := Decode(spec)
	return err
}

// TestResolvePath: a source or values path must lead, inside the root, to
// a folder or a regular file under the cap, and not cover the spec.
func TestResolvePath(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	write := func(p, s string) {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("app/component.yaml", "")
	write("app/values.yaml", "a: 1\n")
	write("charts/web/Chart.yaml", "name: web\n")
	link := func(target, p string) {
		if err := os.Symlink(target, filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	link("/dev/zero", "app/zero.yaml")
	link(filepath.Join(outside), "app/out")
	link("values.yaml", "app/alias.yaml")
	if err := syscall.Mkfifo(filepath.Join(root, "app", "fifo.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	big, err := os.Create(filepath.Join(root, "app", "big.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(fsroot.MaxFileSize + 1); err != nil {
		t.Fatal(err)
	}
	big.Close()
	spec := manifest.New(map[string]any{"apiVersion": "wavesmith.io/v1alpha1", "kind": "Component", "metadata": map[string]any{"name": "c"}})
	spec.Source.File = filepath.Join(root, "app", "component.yaml")
	cases := map[string]struct {
		reason string
		rel    string
		err    error
	}{
		"Values":     {reason: "a values file", rel: "values.yaml"},
		"Chart":      {reason: "a chart folder", rel: "../charts/web"},
		"InsideLink": {reason: "a relative symlink inside", rel: "alias.yaml"},
		"DevZero":    {reason: "a symlink to /dev/zero", rel: "zero.yaml", err: fsroot.ErrOutsideRoot},
		"FIFO":       {reason: "a FIFO is refused at once", rel: "fifo.yaml", err: fsroot.ErrNotRegular},
		"TooLarge":   {reason: "a file over the cap", rel: "big.yaml", err: fsroot.ErrTooLarge},
		"Outside":    {reason: "a folder symlinked outside", rel: "out", err: fsroot.ErrOutsideRoot},
		"OwnFolder":  {reason: "a chart path . covers the Component's own file", rel: ".", err: generators.ErrSourceCoversSpec},
		"ParentOwn":  {reason: "a source folder above the Component's file", rel: "..", err: generators.ErrSourceCoversSpec},
		"OwnFile":    {reason: "a values file that is the Component's own file", rel: "component.yaml", err: generators.ErrSourceCoversSpec},
		"Missing":    {reason: "a missing path", rel: "nope.yaml", err: manifest.ErrInvalid},
		"Absolute":   {reason: "an absolute path", rel: "/etc/hostname", err: fsroot.ErrOutsideRoot},
		"LexicalOut": {reason: "a path climbing out", rel: "../../x", err: fsroot.ErrOutsideRoot},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var err error
			done := make(chan struct{})
			go func() { defer close(done); _, err = ResolvePath(spec, "spec.valuesFiles[0]", tc.rel, root) }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("%s: blocked", tc.reason)
			}
			if !errors.Is(err, tc.err) {
				t.Fatalf("%s: want %v, got %v", tc.reason, tc.err, err)
			}
			var me *manifest.Error
			if err != nil && (!errors.As(err, &me) || me.Field != "spec.valuesFiles[0]") {
				t.Errorf("%s: the error is not at the field: %v", tc.reason, err)
			}
		})
	}
}

// TestCheckTree: a chart folder whose files lead outside the root (a
// files/leak -> /etc/hostname that .Files.Get would read) or that holds
// special files is refused before Helm's loader reads it.
func TestCheckTree(t *testing.T) {
	cases := map[string]struct {
		reason string
		setup  func(t *testing.T, chart string)
		err    error
		file   string
	}{
		"Plain": {reason: "a chart of regular files and a link inside", setup: func(t *testing.T, chart string) {
			if err := os.Symlink("../Chart.yaml", filepath.Join(chart, "files", "link")); err != nil {
				t.Fatal(err)
			}
		}},
		"HostFile": {reason: "files/leak -> /etc/hostname", setup: func(t *testing.T, chart string) {
			if err := os.Symlink("/etc/hostname", filepath.Join(chart, "files", "leak")); err != nil {
				t.Fatal(err)
			}
		}, err: fsroot.ErrOutsideRoot, file: "files/leak"},
		"FolderOut": {reason: "a folder symlinked outside", setup: func(t *testing.T, chart string) {
			if err := os.Symlink("../../..", filepath.Join(chart, "files", "up")); err != nil {
				t.Fatal(err)
			}
		}, err: fsroot.ErrOutsideRoot, file: "files/up"},
		"FIFO": {reason: "a FIFO in the chart", setup: func(t *testing.T, chart string) {
			if err := syscall.Mkfifo(filepath.Join(chart, "files", "pipe"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, err: fsroot.ErrNotRegular, file: "files/pipe"},
		"Loop": {reason: "a folder leading back to the chart", setup: func(t *testing.T, chart string) {
			if err := os.Symlink("..", filepath.Join(chart, "files", "loop")); err != nil {
				t.Fatal(err)
			}
		}, err: fsroot.ErrNotRegular, file: "files/loop"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			chart := filepath.Join(root, "chart")
			for p, s := range map[string]string{"Chart.yaml": "name: c\n", "templates/cm.yaml": "{{ .Files.Get \"files/leak\" }}\n", "files/ok": "ok\n"} {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(chart, p)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(chart, p), []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			tc.setup(t, chart)
			spec := manifest.New(map[string]any{"apiVersion": "wavesmith.io/v1alpha1", "kind": "Component", "metadata": map[string]any{"name": "c"}})
			err := CheckTree(spec, "spec.source.chart.path", chart, root)
			if !errors.Is(err, tc.err) {
				t.Fatalf("%s: want %v, got %v", tc.reason, tc.err, err)
			}
			if err != nil && !strings.Contains(err.Error(), filepath.Join("chart", tc.file)) {
				t.Errorf("%s: the error does not name %s: %v", tc.reason, tc.file, err)
			}
		})
	}
}

// sourceName is a generator that reports which source it was chosen for.
type sourceName string

func (s sourceName) Generate(context.Context, *manifest.Object, generators.Options) (generators.Result, error) {
	return generators.Result{SpecLabels: map[string]string{"source": string(s)}}, nil
}

// TestNullSource: a source set to null is absent, as Decode reads it; the
// generator of the other source runs (a null chart beside a kustomization
// chose the chart generator, which dereferenced the nil chart).
func TestNullSource(t *testing.T) {
	g := Generator{Sources: map[string]generators.Generator{"chart": sourceName("chart"), "kustomization": sourceName("kustomization")}}
	for name, tc := range map[string]struct {
		source map[string]any
		want   string
	}{
		"NullChart":         {map[string]any{"chart": nil, "kustomization": map[string]any{"path": "k"}}, "kustomization"},
		"NullKustomization": {map[string]any{"chart": map[string]any{"path": "c"}, "kustomization": nil}, "chart"},
	} {
		t.Run(name, func(t *testing.T) {
			spec := manifest.New(map[string]any{"apiVersion": "wavesmith.io/v1alpha1", "kind": "Component", "metadata": map[string]any{"name": "c"}, "spec": map[string]any{"source": tc.source}})
			res, err := g.Generate(context.Background(), spec, generators.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.SpecLabels["source"]; got != tc.want {
				t.Errorf("the %s generator ran, want the %s one", got, tc.want)
			}
		})
	}
}

// TestDecodeReportsEveryStage: an unknown field does not hide the rules
// checked on the decoded values (a wave out of range, a status hint
// without a kind, a bad scope), and a bad source is not also reported as
// missing.
func TestDecodeReportsEveryStage(t *testing.T) {
	cases := map[string]struct {
		spec map[string]any
		want []string
	}{
		"FieldsAndValues": {
			spec: map[string]any{"colour": "red", "wave": int64(99999), "source": map[string]any{"chart": map[string]any{"path": "x"}},
				"statusHints": []any{map[string]any{"hint": "has-ready-condition"}}, "scopes": []any{map[string]any{"kind": "X", "scope": "Galaxy"}}},
			want: []string{"spec.colour", "spec.scopes[0].scope", "spec.statusHints[0].kind", "spec.wave"},
		},
		"Policies": {
			spec: map[string]any{"source": map[string]any{"chart": map[string]any{"path": "x"}},
				"policies": map[string]any{"update": "apply", "adoption": "IfUnowned", "delete": "keep", "reconcile": "once"}},
			want: []string{"spec.policies.delete", "spec.policies.update"},
		},
		"BadSource": {
			spec: map[string]any{"source": map[string]any{"chart": "x"}, "strictHooks": "yes"},
			want: []string{"spec.source.chart", "spec.strictHooks"},
		},
		"BadListElement": {
			spec: map[string]any{"source": map[string]any{"chart": map[string]any{"path": "x"}}, "dependsOn": []any{"a", map[string]any{"nam": "b"}}},
			want: []string{"spec.dependsOn[0]", "spec.dependsOn[1].nam"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := manifest.New(map[string]any{"apiVersion": "wavesmith.io/v1alpha1", "kind": "Component", "metadata": map[string]any{"name": "c"}, "spec": tc.spec})
			err := errAs(spec)
			var fields []string
			for _, e := range flatten(err) {
				var me *manifest.Error
				if !errors.As(e, &me) || !errors.Is(e, manifest.ErrInvalid) {
					t.Fatalf("not a located invalid value: %v", e)
				}
				fields = append(fields, me.Field)
			}
			if diff := cmp.Diff(tc.want, fields, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("-want +got:\n%s\n%v", diff, err)
			}
		})
	}
}

// decodedSource is a source generator that renders from the Component
// the Component generator decoded (Source), and fails when asked to
// decode it again (Generate).
type decodedSource struct{ got **v1alpha1.Component }

func (decodedSource) Generate(context.Context, *manifest.Object, generators.Options) (generators.Result, error) {
	return generators.Result{}, errors.New("Generate called: the Component would be decoded twice")
}

func (s decodedSource) GenerateComponent(_ context.Context, _ *manifest.Object, c *v1alpha1.Component, _ generators.Options) (generators.Result, error) {
	*s.got = c
	return generators.Result{}, nil
}

// TestDecodedOnce: the Component generator decodes a Component once and
// hands the decoded value to a source generator that takes it (Source).
func TestDecodedOnce(t *testing.T) {
	var got *v1alpha1.Component
	g := Generator{Sources: map[string]generators.Generator{"kustomization": decodedSource{&got}}}
	spec := manifest.New(map[string]any{"apiVersion": "wavesmith.io/v1alpha1", "kind": "Component", "metadata": map[string]any{"name": "c", "namespace": "apps"},
		"spec": map[string]any{"source": map[string]any{"kustomization": map[string]any{"path": "k"}}, "wave": int64(3)}})
	if _, err := g.Generate(context.Background(), spec, generators.Options{}); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Name != "c" || got.Namespace != "apps" || got.Spec.Source.Kustomization.Path != "k" || got.Spec.Wave == nil || *got.Spec.Wave != 3 {
		t.Errorf("the source got %+v, want the decoded Component", got)
	}
}
