package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/internal/load"
	"github.com/wavesmith/wavesmith/manifest"
)

func wave(n int32) *int32 { return &n }

// TestMerge: each field comes from the first layer that sets it, sections
// merge field by field, and a field is named as its layer's user wrote it.
func TestMerge(t *testing.T) {
	flags := Layer{Name: "flags", Spec: v1alpha1.RenderConfigSpec{Platform: "openshift", Flux: &v1alpha1.FluxDelivery{Timeout: "3m"}},
		FieldName: func(p string) string {
			return map[string]string{"platform": "--platform", "flux.timeout": "--flux-timeout"}[p]
		}}
	project := Layer{Name: ".wavesmith.yaml", Dir: "repo", Spec: v1alpha1.RenderConfigSpec{
		Platform: "kubernetes", Wave: wave(2), Inputs: []string{"deploy"}, Output: "out",
		Policies: &v1alpha1.Policies{Update: "ssa-merge"}, Flux: &v1alpha1.FluxDelivery{Source: "GitRepository/x", Timeout: "9m"},
	}}
	defaults := Layer{Name: "env", Spec: v1alpha1.RenderConfigSpec{Namespace: "apps", Wave: wave(7), Policies: &v1alpha1.Policies{Delete: "orphan"}}}
	m := Merge(flags, project, defaults)
	want := v1alpha1.RenderConfigSpec{
		Platform: "openshift", Wave: wave(2), Namespace: "apps", Inputs: []string{filepath.Join("repo", "deploy")}, Output: filepath.Join("repo", "out"),
		Policies: &v1alpha1.Policies{Update: "ssa-merge", Delete: "orphan"},
		Flux:     &v1alpha1.FluxDelivery{Source: "GitRepository/x", Timeout: "3m"},
	}
	if diff := cmp.Diff(want, m.Spec); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
	for path, name := range map[string]string{
		"platform": "--platform", "wave": ".wavesmith.yaml: spec.wave", "namespace": "env: spec.namespace",
		"flux.timeout": "--flux-timeout", "flux.source": ".wavesmith.yaml: spec.flux.source",
		"policies.delete": "env: spec.policies.delete", "timeout": "timeout",
	} {
		if got := m.Name(path); got != name {
			t.Errorf("Name(%s) = %q, want %q", path, got, name)
		}
	}
	if project.Spec.Inputs[0] != "deploy" {
		t.Error("Merge changed a layer's own paths")
	}
}

func TestOptions(t *testing.T) {
	cases := map[string]struct {
		reason string
		spec   v1alpha1.RenderConfigSpec
		check  func(t *testing.T, m *Merged)
		err    []string
	}{
		"Defaults": {
			reason: "an empty configuration: kubernetes, every dialect (nil), one minute",
			check: func(t *testing.T, m *Merged) {
				o, timeout, err := m.Options(t.TempDir())
				if err != nil || o.Platform != generators.Kubernetes || o.Dialects != nil || timeout != DefaultTimeout {
					t.Errorf("%v %v %v %v", o.Platform, o.Dialects, timeout, err)
				}
			},
		},
		"CamelCase": {
			reason: "platform and policy values in any case, as policy values always were",
			spec:   v1alpha1.RenderConfigSpec{Platform: "OpenShift", Policies: &v1alpha1.Policies{Adoption: "IfUnowned"}, Timeout: "90s", Dialects: []string{"none"}},
			check: func(t *testing.T, m *Merged) {
				o, timeout, err := m.Options(t.TempDir())
				if err != nil || o.Platform != generators.OpenShift || o.Defaults["wavesmith.io/adoption-policy"] != "if-unowned" || timeout != 90*time.Second || o.Dialects == nil || len(o.Dialects) != 0 {
					t.Errorf("%v %v %v %v %v", o.Platform, o.Defaults, timeout, o.Dialects, err)
				}
			},
		},
		"APIVersions": {
			reason: "OpenShift from the API versions when no platform is set",
			spec:   v1alpha1.RenderConfigSpec{APIVersions: []string{"route.openshift.io/v1"}},
			check: func(t *testing.T, m *Merged) {
				if o, _, _ := m.Options(t.TempDir()); o.Platform != generators.OpenShift {
					t.Errorf("platform %v", o.Platform)
				}
			},
		},
		"APIResources": {
			reason: "a kubectl api-resources file, relative to the layer's folder, declares scopes",
			check: func(t *testing.T, _ *Merged) {
				dir := t.TempDir()
				if err := os.WriteFile(filepath.Join(dir, "api.txt"), []byte("APIVERSION      NAMESPACED   KIND\nkyverno.io/v1   false        ClusterPolicy\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				m := Merge(Layer{Name: "f", Dir: dir, Spec: v1alpha1.RenderConfigSpec{APIResources: "api.txt"}})
				o, _, err := m.OptionsIn(openRoot(t, dir))
				if err != nil {
					t.Fatal(err)
				}
				if ns, known := o.Scope.Namespaced("kyverno.io", "ClusterPolicy"); !known || ns {
					t.Errorf("ClusterPolicy: namespaced %v known %v, want cluster-scoped", ns, known)
				}
			},
		},
		"BadAPIResources": {
			reason: "a file that is no kubectl api-resources output is an error naming the setting and the line",
			check: func(t *testing.T, _ *Merged) {
				dir := t.TempDir()
				if err := os.WriteFile(filepath.Join(dir, "api.txt"), []byte("ClusterPolicy false\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				m := Merge(Layer{Name: "f", Dir: dir, Spec: v1alpha1.RenderConfigSpec{APIResources: "api.txt"}, FieldName: func(p string) string { return "--" + p }})
				_, _, err := m.OptionsIn(openRoot(t, dir))
				if want := "--apiResources: " + filepath.Join(dir, "api.txt") + ":1: not in the format of kubectl api-resources"; err == nil || !strings.HasPrefix(err.Error(), want) {
					t.Errorf("got %v, want an error starting with %q", err, want)
				}
			},
		},
		"AllMistakes": {
			reason: "every mistake at once, sorted, each named as its user wrote it",
			spec: v1alpha1.RenderConfigSpec{Platform: "mars", Wave: wave(40000), Timeout: "soon", Dialects: []string{"helm"},
				Policies: &v1alpha1.Policies{Update: "sometimes"}, Output: "yaml", KubeVersion: "2.0"},
			err: []string{`f: spec.dialects: dialect "helm"`, `f: spec.kubeVersion: "2.0"`, `f: spec.output: "yaml" would be a folder`,
				`f: spec.platform: platform "mars"`, `f: spec.policies.update: "sometimes" is not one of ssa-override, replace, ssa-merge, recreate`,
				`f: spec.timeout: "soon"`, "f: spec.wave: 40000: want -32768..32767"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m := Merge(Layer{Name: "f", Spec: tc.spec})
			if tc.check != nil {
				tc.check(t, m)
			}
			if tc.err == nil {
				return
			}
			_, _, err := m.Options(".") // relative paths are relative to the current folder
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("%s: want ErrConfig, got %v", tc.reason, err)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tc.err) {
				t.Fatalf("%s: got %d errors:\n%s", tc.reason, len(lines), err)
			}
			for i, w := range tc.err {
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("%s: error %d is %q, want it to start with %q", tc.reason, i, lines[i], w)
				}
			}
		})
	}
}

func openRoot(t *testing.T, dir string) *fsroot.Root {
	t.Helper()
	r, err := fsroot.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	root := openRoot(t, dir)
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	l, err := ReadFile(root, write("ok.yaml", "apiVersion: wavesmith.io/v1alpha1\nkind: RenderConfig\nmetadata: {name: x}\nspec:\n  inputs: [a]\n  wave: 3\n"))
	if err != nil || l.Dir != dir || *l.Spec.Wave != 3 {
		t.Errorf("%+v %v", l, err)
	}
	if l, err := ReadFile(root, write("empty.yaml", "\n# a marker only\n")); err != nil || l.Spec.Platform != "" {
		t.Errorf("an empty project file marks a folder: %v", err)
	}
	for name, body := range map[string]string{
		"unknown.yaml": "apiVersion: wavesmith.io/v1alpha1\nkind: RenderConfig\nspec:\n  plattform: x\n",
		"kind.yaml":    "apiVersion: v1\nkind: ConfigMap\n",
		"bad.yaml":     "spec: [\n",
	} {
		if _, err := ReadFile(root, write(name, body)); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: want ErrConfig naming the file, got %v", name, err)
		}
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	spec := v1alpha1.RenderConfigSpec{Inputs: []string{"../deploy"}, Output: ".", Wave: wave(-2), ArgoCD: &v1alpha1.ArgoCDDelivery{Repo: "https://x"}}
	b := Encode(spec, "tree")
	if strings.Contains(string(b), "creationTimestamp") {
		t.Errorf("encoded with a timestamp:\n%s", b)
	}
	l, err := Parse("rec.yaml", b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(spec, l.Spec); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}

// TestBoundary: every setting that holds a path (inputs, output,
// apiResources), whichever layer set it, stays in the root: "..", an
// absolute path outside and a symlink out are refused, and a refused
// file is never read (no line of it in the error).
func TestBoundary(t *testing.T) {
	base := t.TempDir()
	root, outside := filepath.Join(base, "repo"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "deploy"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const secret = "CANARY-SECRET-1234"
	if err := os.WriteFile(filepath.Join(outside, "api.txt"), []byte(secret+" false x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	r := openRoot(t, root)
	escapes := map[string]string{"dotdot": "../outside", "absolute": outside, "symlink": "link"}
	file := map[string]string{"dotdot": "../outside/api.txt", "absolute": filepath.Join(outside, "api.txt"), "symlink": "link/api.txt"}
	for way, p := range escapes {
		for field, spec := range map[string]v1alpha1.RenderConfigSpec{
			"inputs":       {Inputs: []string{"deploy", p}},
			"output":       {Output: p + "/tree"},
			"apiResources": {APIResources: file[way]},
		} {
			t.Run(field+"/"+way, func(t *testing.T) {
				m := Merge(Layer{Name: ".wavesmith.yaml", Dir: root, Spec: spec})
				_, _, err := m.OptionsIn(r)
				if !errors.Is(err, fsroot.ErrOutsideRoot) || !errors.Is(err, ErrConfig) {
					t.Fatalf("got %v, want ErrOutsideRoot", err)
				}
				if !strings.Contains(err.Error(), ".wavesmith.yaml: spec."+field) {
					t.Errorf("%v does not name the field", err)
				}
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the refused file was read: %v", err)
				}
			})
		}
	}
}

// TestReadFileRefuses: a project file or record that is a symlink out of
// the root, a device or a FIFO is refused at once (no hang, no OOM).
func TestReadFileRefuses(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "repo")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "secret.yaml"), []byte("apiVersion: CANARY\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := openRoot(t, root)
	for name, make := range map[string]func(p string) error{
		"out":  func(p string) error { return os.Symlink("../../secret.yaml", p) },
		"zero": func(p string) error { return os.Symlink("/dev/zero", p) },
		"fifo": func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"dir":  func(p string) error { return os.Mkdir(p, 0o755) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(root, name)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := make(filepath.Join(dir, ProjectFile)); err != nil {
				t.Fatal(err)
			}
			_, ok, err := Project(r, dir)
			if !ok || err == nil || strings.Contains(err.Error(), "CANARY") || !strings.Contains(err.Error(), filepath.Join(dir, ProjectFile)) {
				t.Errorf("Project = %v %v, want an error naming the file", ok, err)
			}
			if !errors.Is(err, fsroot.ErrOutsideRoot) && !errors.Is(err, fsroot.ErrNotRegular) && !errors.Is(err, syscall.EISDIR) {
				t.Errorf("Project = %v, want ErrOutsideRoot or ErrNotRegular", err)
			}
		})
	}
	if _, ok, err := Project(r, root); ok || err != nil {
		t.Errorf("no project file: %v %v", ok, err)
	}
}

// TestParseReportsAll: a project file's mistakes are reported as spec
// errors are: every one at once, in line order, each at its line with its
// field path, an unknown field with the known ones, never a json: prefix.
func TestParseReportsAll(t *testing.T) {
	const doc = "apiVersion: wavesmith.io/v1alpha1\nkind: RenderConfig\nmetadata: {name: p}\nspec:\n  inputs: [deploy, 3]\n  platfrom: openshift\n  wave: soon\n  policies: {updat: x}\nstatus: {}\n"
	_, err := Parse(".wavesmith.yaml", []byte(doc))
	var es manifest.Errors
	if !errors.As(err, &es) || !errors.Is(err, ErrConfig) {
		t.Fatalf("want manifest.Errors wrapping ErrConfig, got %T %v", err, err)
	}
	var got []string
	for _, e := range es {
		if !errors.Is(e, ErrConfig) {
			t.Errorf("%v does not wrap ErrConfig", e)
		}
		got = append(got, e.Error())
	}
	want := []string{
		`.wavesmith.yaml:5: RenderConfig.wavesmith.io/p: spec.inputs[1]: want a string, got a number`,
		`.wavesmith.yaml:6: RenderConfig.wavesmith.io/p: spec.platfrom: unknown field "platfrom" (known: apiResources, apiVersions, argocd, dialects, flux, inputs, kubeVersion, namespace, output, partOf, platform, policies, timeout, treePath, wave)`,
		`.wavesmith.yaml:7: RenderConfig.wavesmith.io/p: spec.wave: want an integer, got string`,
		`.wavesmith.yaml:8: RenderConfig.wavesmith.io/p: spec.policies.updat: unknown field "updat" (known: adoption, delete, reconcile, update)`,
		`.wavesmith.yaml:9: RenderConfig.wavesmith.io/p: status: unknown field "status" (known: apiVersion, kind, metadata, spec)`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if strings.Contains(err.Error(), "json") {
		t.Errorf("a json: prefix: %v", err)
	}
	for _, bad := range []string{"wave: 99999999999", "wave: 1.5", "flux: true", "dialects: argocd"} {
		_, err := Parse("p.yaml", []byte("apiVersion: wavesmith.io/v1alpha1\nkind: RenderConfig\nspec:\n  "+bad+"\n"))
		if !errors.Is(err, ErrConfig) || !strings.HasPrefix(err.Error(), "p.yaml:4: ") || strings.Contains(err.Error(), "json") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// TestOptionsTakeTheDoorsRoot: Options confines paths to the root the door
// decided, never to a root of its own (the settings' folder's git
// repository): an apiResources file inside the door's root is read, one
// outside it is refused, and no root is an error.
func TestOptionsTakeTheDoorsRoot(t *testing.T) {
	repo := t.TempDir()
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	inner := filepath.Join(repo, "deploy")
	if err := os.Mkdir(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	api := []byte("APIVERSION      NAMESPACED   KIND\nkyverno.io/v1   false        ClusterPolicy\n")
	for _, p := range []string{filepath.Join(repo, "api.txt"), filepath.Join(inner, "api.txt")} {
		if err := os.WriteFile(p, api, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := map[string]struct {
		root, apiResources string
		wantErr            error
	}{
		"InsideTheDoorsRoot":  {root: inner, apiResources: filepath.Join(inner, "api.txt")},
		"TheRepositoryAsRoot": {root: repo, apiResources: filepath.Join(repo, "api.txt")},
		"OutsideTheDoorsRoot": {root: inner, apiResources: filepath.Join(repo, "api.txt"), wantErr: fsroot.ErrOutsideRoot},
		"NoRoot":              {apiResources: filepath.Join(inner, "api.txt"), wantErr: load.ErrNoRoot},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// The layer's folder lies in a git repository: a root found
			// from it would be repo, whatever the door decided.
			m := Merge(Layer{Name: "f", Dir: inner, Spec: v1alpha1.RenderConfigSpec{APIResources: tc.apiResources}})
			o, _, err := m.Options(tc.root)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("want %v, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ns, known := o.Scope.Namespaced("kyverno.io", "ClusterPolicy"); !known || ns {
				t.Errorf("the apiResources file was not read through the door's root")
			}
		})
	}
}
