package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/internal/load"
	"github.com/wavesmith/wavesmith/manifest"
)

// countGenerator renders "example.com/Count" specs: one ConfigMap holding
// the bytes of the file or the files of the folder spec.read names
// (relative to the spec's file), the platform, Kubernetes version, API
// versions it was given, and the bytes of the root file "lock".
// It counts its runs and fails for a spec with spec.fail.
type countGenerator struct{ runs *atomic.Int64 }

func (g countGenerator) Generate(_ context.Context, spec *manifest.Object, opts generators.Options) (generators.Result, error) {
	g.runs.Add(1)
	s, _ := spec.Map["spec"].(map[string]any)
	if f, _ := s["fail"].(bool); f {
		return generators.Result{}, errors.New("asked to fail")
	}
	data := map[string]any{
		"platform": string(opts.Platform), "kube": opts.KubeVersion,
		"apis": strings.Join(opts.APIVersions, ","),
	}
	if p, ok := s["read"].(string); ok {
		p = filepath.Join(filepath.Dir(spec.Source.File), p)
		if err := filepath.WalkDir(p, func(f string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(f)
			data[filepath.Base(f)] = string(b)
			return err
		}); err != nil {
			return generators.Result{}, err
		}
	}
	if b, err := os.ReadFile(filepath.Join(opts.Root, "lock")); err == nil {
		data["lock"] = string(b)
	}
	_, namespaced := opts.Scope.Namespaced("example.com", "Widget")
	data["widgetKnown"] = fmt.Sprint(namespaced)
	cm := manifest.New(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": spec.Name(), "namespace": "ns"}, "data": data})
	return generators.Result{Objects: []*manifest.Object{cm}, Warnings: []manifest.Warning{spec.Warn("spec", "counted")},
		SpecLabels: map[string]string{"app.kubernetes.io/name": spec.Name()}}, nil
}

func (countGenerator) Reads(spec *manifest.Object, _ string) []generators.Read {
	s, _ := spec.Map["spec"].(map[string]any)
	if p, ok := s["read"].(string); ok {
		return []generators.Read{{Field: "spec.read", Path: p}}
	}
	return nil
}

const countSpecs = `apiVersion: example.com/v1
kind: Count
metadata: {name: a, namespace: ns}
spec: {read: files/a.txt}
---
apiVersion: example.com/v1
kind: Count
metadata: {name: b, namespace: ns}
spec: {read: folder}
`

// countRepo writes a root with the Count specs and what they read.
func countRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"specs/specs.yaml":       countSpecs,
		"specs/files/a.txt":      "a1",
		"specs/folder/x.txt":     "x1",
		"specs/folder/sub/y.txt": "y1",
		"lock":                   "lock1",
	})
	return root
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// renderCount renders root's specs (and extra objects) with opts; it
// returns the stream and the warnings.
func renderCount(t *testing.T, root string, opts Options, extra string) ([]byte, []manifest.Warning, error) {
	t.Helper()
	file := filepath.Join(root, "specs", "specs.yaml")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.Decode(file, b)
	if err != nil {
		t.Fatal(err)
	}
	if extra != "" {
		more, err := manifest.Decode(filepath.Join(root, "extra.yaml"), []byte(extra))
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, more...)
	}
	opts.Root = root
	opts.Engines = engines.Dialects()
	res, err := Render(context.Background(), objs, opts)
	if err != nil {
		return nil, nil, err
	}
	return res.Stream(), res.Warnings, nil
}

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object}}
`

// TestMemoReuse renders twice with one Memo: a spec whose inputs are
// byte-identical is generated once, and again when a byte of a file it
// reads, a file every spec may read, a setting or the spec changes. Each
// render with the Memo gives the bytes and warnings a render without it
// gives.
func TestMemoReuse(t *testing.T) {
	cases := map[string]struct {
		reason string
		change func(t *testing.T, root string, o *Options, extra *string)
		runs   int64 // runs of the second render
	}{
		"Same": {"nothing changed: both specs reused", func(*testing.T, string, *Options, *string) {}, 0},
		"ReadFile": {"a byte of the file a reads", func(t *testing.T, root string, _ *Options, _ *string) {
			writeFiles(t, root, map[string]string{"specs/files/a.txt": "a2"})
		}, 1},
		"FolderFile": {"a byte of a file deep in the folder b reads", func(t *testing.T, root string, _ *Options, _ *string) {
			writeFiles(t, root, map[string]string{"specs/folder/sub/y.txt": "y2"})
		}, 1},
		"FolderAdded": {"a file added to the folder b reads", func(t *testing.T, root string, _ *Options, _ *string) {
			writeFiles(t, root, map[string]string{"specs/folder/z.txt": "z"})
		}, 1},
		"FolderRenamed": {"a file of the folder renamed, same bytes", func(t *testing.T, root string, _ *Options, _ *string) {
			if err := os.Rename(filepath.Join(root, "specs/folder/x.txt"), filepath.Join(root, "specs/folder/w.txt")); err != nil {
				t.Fatal(err)
			}
		}, 1},
		"ReadRemoved": {"the file a reads removed (the generator fails: nothing kept)", func(t *testing.T, root string, _ *Options, _ *string) {
			if err := os.Remove(filepath.Join(root, "specs/files/a.txt")); err != nil {
				t.Fatal(err)
			}
		}, 1},
		"MemoFile": {"the root file every spec may read", func(t *testing.T, root string, _ *Options, _ *string) {
			writeFiles(t, root, map[string]string{"lock": "lock2"})
		}, 2},
		"Platform":    {"the platform", func(_ *testing.T, _ string, o *Options, _ *string) { o.Platform = generators.OpenShift }, 2},
		"KubeVersion": {"the Kubernetes version", func(_ *testing.T, _ string, o *Options, _ *string) { o.KubeVersion = "v1.30.0" }, 2},
		"APIVersions": {"the API versions", func(_ *testing.T, _ string, o *Options, _ *string) { o.APIVersions = []string{"example.com/v1"} }, 2},
		"Scope":       {"a CRD among the inputs changes the scope table", func(_ *testing.T, _ string, _ *Options, e *string) { *e = widgetCRD }, 2},
		"Wave": {"the wave the engine gives (generators return offsets from it: the generated objects are the same)", func(_ *testing.T, _ string, o *Options, _ *string) {
			o.Defaults = map[string]string{"wavesmith.io/apply-order": "3"}
		}, 0},
		"Namespace": {"a setting no generator sees (the default namespace: both specs name theirs)", func(_ *testing.T, _ string, o *Options, _ *string) { o.Namespace = "other" }, 0},
		"Spec": {"a's spec", func(t *testing.T, root string, _ *Options, _ *string) {
			writeFiles(t, root, map[string]string{"specs/specs.yaml": strings.Replace(countSpecs, "{name: a, namespace: ns}", "{name: a, namespace: ns, labels: {x: y}}", 1)})
		}, 1},
		"Moved": {"a spec's line moves (a warning names it)", func(t *testing.T, root string, _ *Options, _ *string) {
			writeFiles(t, root, map[string]string{"specs/specs.yaml": "# a comment\n" + countSpecs})
		}, 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			root := countRepo(t)
			var runs atomic.Int64
			reg := generators.Registry{"example.com/Count": countGenerator{runs: &runs}}
			memo := NewMemo("lock")
			opts := Options{Generators: reg, Reuse: memo}
			if _, _, err := renderCount(t, root, opts, ""); err != nil {
				t.Fatal(err)
			}
			if got := runs.Load(); got != 2 {
				t.Fatalf("first render: %d runs, want 2", got)
			}
			extra := ""
			tc.change(t, root, &opts, &extra)
			runs.Store(0)
			got, gotWarn, gotErr := renderCount(t, root, opts, extra)
			if n := runs.Load(); n != tc.runs {
				t.Errorf("%s: the second render ran the generator %d times, want %d", tc.reason, n, tc.runs)
			}
			opts.Reuse = nil
			want, wantWarn, wantErr := renderCount(t, root, opts, extra)
			if (gotErr == nil) != (wantErr == nil) {
				t.Fatalf("%s: with the memo %v, without %v", tc.reason, gotErr, wantErr)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("%s: the render with the memo differs from one without (-without +with):\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(wantWarn, gotWarn); diff != "" {
				t.Errorf("%s: warnings differ (-without +with):\n%s", tc.reason, diff)
			}
		})
	}
}

// TestMemoErrorsNotKept: a generator's error is never reused.
func TestMemoErrorsNotKept(t *testing.T) {
	root := countRepo(t)
	writeFiles(t, root, map[string]string{"specs/specs.yaml": strings.Replace(countSpecs, "{read: files/a.txt}", "{read: files/a.txt, fail: true}", 1)})
	var runs atomic.Int64
	memo := NewMemo()
	opts := Options{Generators: generators.Registry{"example.com/Count": countGenerator{runs: &runs}}, Reuse: memo}
	for i := range 2 {
		if _, _, err := renderCount(t, root, opts, ""); err == nil {
			t.Fatalf("render %d: no error", i)
		}
	}
	// b rendered once and reused; a failed and ran each time.
	if got := runs.Load(); got != 3 {
		t.Errorf("%d runs, want 3 (the failing spec run each time, the other once)", got)
	}
	if hits, misses := memo.Stats(); hits != 1 || misses != 1 {
		t.Errorf("Stats() = %d hits, %d misses, want 1, 1", hits, misses)
	}
}

// TestMemoOutsideRoot: a spec that reads through a symlink leaving the
// root is never reused (its reads cannot be hashed).
func TestMemoOutsideRoot(t *testing.T) {
	root := countRepo(t)
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"o.txt": "o"})
	if err := os.Symlink(filepath.Join(outside, "o.txt"), filepath.Join(root, "specs", "files", "out.txt")); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, root, map[string]string{"specs/specs.yaml": strings.Replace(countSpecs, "files/a.txt", "files/out.txt", 1)})
	var runs atomic.Int64
	opts := Options{Generators: generators.Registry{"example.com/Count": countGenerator{runs: &runs}}, Reuse: NewMemo()}
	for range 2 {
		if _, _, err := renderCount(t, root, opts, ""); err != nil {
			t.Fatal(err)
		}
	}
	if got := runs.Load(); got != 3 {
		t.Errorf("%d runs, want 3 (a, reading outside the root, each time; b once)", got)
	}
}

// TestMemoCopies: what the Memo hands out is a copy; changing it changes
// nothing the Memo hands out next.
func TestMemoCopies(t *testing.T) {
	m := NewMemo()
	k := [32]byte{1}
	o := manifest.New(map[string]any{"kind": "ConfigMap", "data": map[string]any{"a": "1"}})
	in := generators.Result{Objects: []*manifest.Object{o}, Defaults: map[string]string{"d": "1"}, SpecLabels: map[string]string{"l": "1"},
		Warnings: []manifest.Warning{{Message: "w", Ref: &manifest.Ref{APIVersion: "v1"}}}}
	m.put(k, in)
	o.Map["data"].(map[string]any)["a"] = "changed after put"
	got, ok := m.get(k)
	if !ok {
		t.Fatal("not found")
	}
	got.Objects[0].Map["data"].(map[string]any)["a"] = "changed after get"
	got.Defaults["d"], got.SpecLabels["l"] = "x", "x"
	got.Warnings[0].Message, got.Warnings[0].Ref.APIVersion = "x", "x"
	again, _ := m.get(k)
	want := generators.Result{Objects: []*manifest.Object{manifest.New(map[string]any{"kind": "ConfigMap", "data": map[string]any{"a": "1"}})},
		Defaults: map[string]string{"d": "1"}, SpecLabels: map[string]string{"l": "1"},
		Warnings: []manifest.Warning{{Message: "w", Ref: &manifest.Ref{APIVersion: "v1"}}}}
	if diff := cmp.Diff(want.Objects[0].Map, again.Objects[0].Map); diff != "" {
		t.Errorf("object (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{want.Defaults, want.SpecLabels, want.Warnings}, []any{again.Defaults, again.SpecLabels, again.Warnings}); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
}

// TestMemoKeyCoversGeneratorOptions fails when generators.Options gains a
// field: whatever a generator can see must be part of the Memo's digest
// (reuse.go: newReuse and key), then listed here.
func TestMemoKeyCoversGeneratorOptions(t *testing.T) {
	// Checked is what the generator's own Check decoded from the spec's
	// bytes, which the key holds.
	covered := []string{"Platform", "KubeVersion", "APIVersions", "Root", "Scope", "Checked"}
	var fields []string
	typ := reflect.TypeFor[generators.Options]()
	for i := range typ.NumField() {
		fields = append(fields, typ.Field(i).Name)
	}
	if diff := cmp.Diff(covered, fields); diff != "" {
		t.Errorf("generators.Options changed: put the new field into the Memo's digest (reuse.go), then here (-covered +fields):\n%s", diff)
	}
}

// TestMemoRandomEdits renders a small repository (a Kaoto, a chart
// Component, a kustomization Component) through random edit sequences,
// each step with a Memo shared by all steps and without one, and requires
// byte-identical streams.
func TestMemoRandomEdits(t *testing.T) {
	if testing.Short() {
		t.Skip("renders charts and kustomizations")
	}
	edits := []struct {
		name string
		do   func(r *rand.Rand) map[string]string
	}{
		{"kaoto image", func(r *rand.Rand) map[string]string {
			return map[string]string{"deploy/kaoto.yaml": fmt.Sprintf(memoKaoto, r.IntN(3))}
		}},
		{"chart values", func(r *rand.Rand) map[string]string {
			return map[string]string{"deploy/web.yaml": fmt.Sprintf(memoWeb, []string{"blue", "red", "green"}[r.IntN(3)], r.IntN(2))}
		}},
		{"chart template", func(r *rand.Rand) map[string]string {
			return map[string]string{"charts/web/templates/cm.yaml": fmt.Sprintf(memoTemplate, r.IntN(3))}
		}},
		{"chart version", func(r *rand.Rand) map[string]string {
			return map[string]string{"charts/web/Chart.yaml": fmt.Sprintf(memoChart, r.IntN(3))}
		}},
		{"values file", func(r *rand.Rand) map[string]string {
			return map[string]string{"deploy/values.yaml": fmt.Sprintf("size: %d\n", r.IntN(3))}
		}},
		{"kustomization resource", func(r *rand.Rand) map[string]string {
			return map[string]string{"kust/base/cm.yaml": fmt.Sprintf(memoKustCM, r.IntN(3))}
		}},
		{"kustomization", func(r *rand.Rand) map[string]string {
			return map[string]string{"kust/base/kustomization.yaml": fmt.Sprintf(memoKustomization, []string{"a-", "b-", "c-"}[r.IntN(3)])}
		}},
	}
	for seed := range uint64(3) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 22))
			root := t.TempDir()
			writeFiles(t, root, map[string]string{
				"deploy/kaoto.yaml":            fmt.Sprintf(memoKaoto, 0),
				"deploy/web.yaml":              fmt.Sprintf(memoWeb, "blue", 0),
				"deploy/values.yaml":           "size: 1\n",
				"deploy/kust.yaml":             memoKust,
				"charts/web/Chart.yaml":        fmt.Sprintf(memoChart, 0),
				"charts/web/templates/cm.yaml": fmt.Sprintf(memoTemplate, 0),
				"kust/base/kustomization.yaml": fmt.Sprintf(memoKustomization, "a-"),
				"kust/base/cm.yaml":            fmt.Sprintf(memoKustCM, 0),
			})
			memo := NewMemo()
			platform := generators.Kubernetes
			for step := range 8 {
				var did []string
				for range 1 + r.IntN(2) {
					e := edits[r.IntN(len(edits))]
					writeFiles(t, root, e.do(r))
					did = append(did, e.name)
				}
				if r.IntN(5) == 0 {
					platform = map[generators.Platform]generators.Platform{generators.Kubernetes: generators.OpenShift, generators.OpenShift: generators.Kubernetes}[platform]
					did = append(did, "platform "+string(platform))
				}
				render := func(m *Memo) []byte {
					t.Helper()
					objs, err := load.Inputs(context.Background(), root, builtin.Registry(), []string{filepath.Join(root, "deploy")}, nil)
					if err != nil {
						t.Fatal(err)
					}
					res, err := Render(context.Background(), objs, Options{Generators: builtin.Registry(), Engines: engines.Dialects(), Root: root, Platform: platform, Reuse: m})
					if err != nil {
						t.Fatalf("step %d (%s): %v", step, strings.Join(did, ", "), err)
					}
					return res.Stream()
				}
				with, without := render(memo), render(nil)
				if !bytes.Equal(with, without) {
					t.Fatalf("step %d (%s): the render with the memo differs:\n%s", step, strings.Join(did, ", "), cmp.Diff(string(without), string(with)))
				}
			}
			if hits, _ := memo.Stats(); hits == 0 {
				t.Errorf("no spec was ever reused: the sequence proves nothing")
			}
		})
	}
}

const memoKaoto = `apiVersion: designer.kaoto.io/v1alpha1
kind: Kaoto
metadata: {name: designer, namespace: demo}
spec:
  image: quay.io/kaotoio/kaoto-app:2.4.%d
`

const memoWeb = `apiVersion: wavesmith.io/v1alpha1
kind: Component
metadata: {name: web, namespace: apps}
spec:
  source:
    chart: {path: ../charts/web}
  valuesFiles: [values.yaml]
  values: {color: %s, replicas: %d}
`

const memoChart = `apiVersion: v2
name: web
version: 1.0.%d
`

const memoTemplate = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config-%d
  labels:
    helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
data:
  color: {{ .Values.color | quote }}
  size: {{ .Values.size | quote }}
  replicas: {{ .Values.replicas | quote }}
  kube: {{ .Capabilities.KubeVersion.Version | quote }}
`

const memoKust = `apiVersion: wavesmith.io/v1alpha1
kind: Component
metadata: {name: kust, namespace: apps}
spec:
  source:
    kustomization: {path: ../kust/base}
`

const memoKustomization = `namePrefix: %s
resources: [cm.yaml]
`

const memoKustCM = `apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {level: "%d"}
`
