package kustomize

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/manifest"
)

// TestErrors feeds bad input (testdata/bad/<case>, or a shared fixture
// with bad values) and expects a *manifest.Error with the sentinels, the
// file, line and field, and the words given.
func TestErrors(t *testing.T) {
	bad, _ := filepath.Abs(filepath.Join("testdata", "bad"))
	cases := map[string]struct {
		reason string
		dir    string // folder of the spec file; the path is relative to it
		path   string
		spec   map[string]any
		errs   []error
		file   string // the error's file, relative to dir ("" = the spec file)
		line   int    // -1: any line > 0
		field  string
		text   []string
	}{
		"RemoteResource": {
			reason: "a remote resource (a git URL with a ref) is refused before kustomize could clone it",
			dir:    bad, path: "remote-resource", errs: []error{ErrKustomization},
			file: "remote-resource/kustomization.yaml", line: 3, field: "resources[1]",
			text: []string{`remote reference "https://github.com/example/platform//base?ref=v1.2.0"`, "vendor it"},
		},
		"RemoteComponent": {
			reason: "a github.com component without scheme is remote too",
			dir:    bad, path: "remote-component", errs: []error{ErrKustomization},
			file: "remote-component/kustomization.yaml", line: 4, field: "components[0]",
			text: []string{"remote reference", "github.com/example/platform"},
		},
		"RemotePatch": {
			reason: "a patch file over HTTP is remote",
			dir:    bad, path: "remote-patch", errs: []error{ErrKustomization},
			file: "remote-patch/kustomization.yaml", line: 4, field: "patches[0].path",
			text: []string{"remote reference", "https://example.com/patches/configmap.yaml"},
		},
		"ExecPlugin": {
			reason: "a legacy exec plugin configuration is refused",
			dir:    bad, path: "exec-plugin", errs: []error{ErrKustomization},
			file: "exec-plugin/kustomization.yaml", line: 4, field: "transformers[0]",
			text: []string{"someteam.example.com/v1 SedTransformer", "sed.yaml", "external (exec or Go) plugin"},
		},
		"KRMFunction": {
			reason: "an inline generator with a KRM function annotation is refused",
			dir:    bad, path: "krm-function", errs: []error{ErrKustomization},
			file: "krm-function/kustomization.yaml", line: 4, field: "generators[0]",
			text: []string{"SecretFetcher", "config.kubernetes.io/function", "exec and container plugins are refused"},
		},
		"HelmCharts": {
			reason: "helmCharts would run helm",
			dir:    bad, path: "helm-charts", errs: []error{ErrKustomization},
			file: "helm-charts/kustomization.yaml", line: 1, field: "helmCharts",
			text: []string{"chart Component"},
		},
		"LeavesRoot": {
			reason: "a base leaving the render root is refused before anything is read",
			dir:    bad, path: "leaves-root", errs: []error{ErrKustomization},
			file: "leaves-root/kustomization.yaml", line: 2, field: "resources[0]",
			text: []string{`"../../../../../../elsewhere" leaves the root`},
		},
		"OutsideKustomization": {
			reason: "a file outside its kustomization's folder breaks kustomize's RootOnly restriction",
			dir:    bad, path: "restricted", errs: []error{ErrKustomization},
			file: "restricted/app/kustomization.yaml", line: 4, field: "patches[0].path",
			text: []string{"RootOnly", "../patch.yaml"},
		},
		"MissingResource": {
			reason: "a resource that does not exist",
			dir:    bad, path: "missing-resource", errs: []error{ErrKustomization},
			file: "missing-resource/kustomization.yaml", line: 2, field: "resources[0]",
			text: []string{`"configmap.yaml" does not exist`},
		},
		"IncludedKustomizations": {
			reason: "component-operator-runtime's includedKustomizations reaches outside the folder",
			dir:    bad, path: "included-kustomizations", errs: []error{ErrKustomization},
			file: "included-kustomizations/.component-config.yaml", field: "includedKustomizations",
			text: []string{"not supported"},
		},
		"BrokenTemplate": {
			reason: "a template that does not parse names its file and line",
			dir:    bad, path: "broken-template", errs: []error{ErrTemplate},
			file: "broken-template/configmap.yaml", line: -1,
			text: []string{"unexpected EOF"},
		},
		"EnvFunction": {
			reason: "env is not a template function",
			dir:    bad, path: "env-function", errs: []error{ErrTemplate},
			file: "env-function/configmap.yaml", line: 6,
			text: []string{`function "env" not defined`},
		},
		"MissingKey": {
			reason: "a missing key is an error naming the template, line and key (missingkey=error), not an empty string",
			dir:    bad, path: "missing-key", errs: []error{ErrTemplate},
			file: "missing-key/configmap.yaml", line: 9,
			text: []string{`map has no entry for key "tag"`, "<.Values.image.tag>"},
		},
		"InvalidYAML": {
			reason: "a template rendering invalid YAML names the template and the output line",
			dir:    bad, path: "invalid-yaml", spec: map[string]any{"values": map[string]any{"description": "note: this breaks"}},
			errs: []error{ErrTemplate, manifest.ErrSyntax},
			file: "invalid-yaml/configmap.yaml",
			text: []string{"renders invalid YAML", `output line 6: "  description: note: this breaks"`},
		},
		"BuildFailure": {
			reason: "a kustomize error names the Component and the folder",
			dir:    bad, path: "build-failure", errs: []error{ErrKustomization},
			field: sourceField,
			text:  []string{"kustomize build", "build-failure", "not-there"},
		},
		"RequiredValue": {
			reason: "a missing required value names the template, line and message",
			dir:    fixtures, path: "templated", errs: []error{ErrTemplate, ErrRequired},
			file: "templated/kustomization.yaml", line: 21,
			text: []string{"image.tag is required"},
		},
		"RequiredInFile": {
			reason: "required in a resource template",
			dir:    fixtures, path: "templated",
			spec: map[string]any{"values": map[string]any{"image": map[string]any{"tag": "1"}, "ingress": map[string]any{"enabled": true}}},
			errs: []error{ErrTemplate, ErrRequired},
			file: "templated/ingress.yaml", line: 10,
			text: []string{"ingress.host is required when ingress.enabled"},
		},
		"NotAFolder": {
			reason: "the path names a file",
			dir:    fixtures, path: "overlay/hpa.yaml", errs: []error{manifest.ErrInvalid},
			field: sourceField, text: []string{"not a folder"},
		},
		"OutsideRoot": {
			reason: "the path leaves the repository root",
			dir:    fixtures, path: "../../..", errs: []error{fsroot.ErrOutsideRoot},
			field: sourceField,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := newSpec(tc.dir, tc.path, tc.spec)
			_, err := Generator{}.Generate(t.Context(), spec, generators.Options{Root: repoRoot})
			for _, want := range tc.errs {
				if !errors.Is(err, want) {
					t.Fatalf("%s: want %v, got %v", tc.reason, want, err)
				}
			}
			var me *manifest.Error
			if !errors.As(err, &me) {
				t.Fatalf("%s: want a *manifest.Error, got %T", tc.reason, err)
			}
			wantFile := spec.Source.File
			if tc.file != "" {
				wantFile = filepath.Join(tc.dir, filepath.FromSlash(tc.file))
			}
			if me.File != wantFile {
				t.Errorf("%s: file %q, want %q", tc.reason, me.File, wantFile)
			}
			if (tc.line >= 0 && tc.file != "" && me.Line != tc.line) || (tc.line < 0 && me.Line <= 0) {
				t.Errorf("%s: line %d, want %d", tc.reason, me.Line, tc.line)
			}
			if me.Field != tc.field {
				t.Errorf("%s: field %q, want %q", tc.reason, me.Field, tc.field)
			}
			if me.Object != "Component.wavesmith.io/apps/demo" {
				t.Errorf("%s: object %q", tc.reason, me.Object)
			}
			msg := err.Error()
			for _, s := range append(tc.text, wantFile) {
				if !strings.Contains(msg, s) {
					t.Errorf("%s: %q lacks %q", tc.reason, msg, s)
				}
			}
		})
	}
}

// TestSymlinks: links inside the folder are followed; links leaving it
// are refused where the kustomization reaches them, directly or through
// other links, and ignored where it does not (kustomize never reads
// them); a loop is refused where the folder is listed.
func TestSymlinks(t *testing.T) {
	// The render root is repo/; secret.yaml and outside/ lie beside it.
	root := filepath.Join(t.TempDir(), "repo")
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n"
	write("../secret.yaml", strings.Replace(cm, "%s", "host-secret", 1))
	write("../outside/kustomization.yaml", "resources: [cm.yaml]\n")
	write("../outside/cm.yaml", strings.Replace(cm, "%s", "outside", 1))
	write("escape/kustomization.yaml", "resources: [cm.yaml]\n")
	link("../../secret.yaml", "escape/cm.yaml")
	write("chain/kustomization.yaml", "resources: [cm.yaml]\n")
	link("hop.yaml", "chain/cm.yaml")
	link("../../secret.yaml", "chain/hop.yaml")
	write("dir-escape/kustomization.yaml", "resources: [base]\n")
	link("../../outside", "dir-escape/base")
	write("patch-escape/kustomization.yaml", "resources: [cm.yaml]\npatches:\n- path: linked/cm.yaml\n")
	write("patch-escape/cm.yaml", strings.Replace(cm, "%s", "p", 1))
	link("../../outside", "patch-escape/linked")
	// Inside the root, kustomize's load restrictor: a folder (a base)
	// may lie anywhere, a file only at or below its kustomization, also
	// through a symlink.
	write("shared/kustomization.yaml", "resources: [cm.yaml]\n")
	write("shared/cm.yaml", strings.Replace(cm, "%s", "shared", 1))
	write("dir-in-root/kustomization.yaml", "resources: [base]\n")
	link("../shared", "dir-in-root/base")
	write("file-in-root/kustomization.yaml", "resources: [cm.yaml]\n")
	link("../shared/cm.yaml", "file-in-root/cm.yaml")
	write("inside/kustomization.yaml", "resources: [extra.yaml, linked]\n")
	write("inside/real/kustomization.yaml", "resources: [cm.yaml]\n")
	write("inside/real/cm.yaml", strings.Replace(cm, "%s", "real", 1))
	write("inside/real/extra.yaml", strings.Replace(cm, "%s", "extra", 1))
	link("real/extra.yaml", "inside/extra.yaml")
	link("real", "inside/linked")
	write("unreached/kustomization.yaml", "resources: [cm.yaml]\n")
	write("unreached/cm.yaml", strings.Replace(cm, "%s", "unreached", 1))
	link("../../secret.yaml", "unreached/stray.yaml")
	link("/etc", "unreached/etc")
	link(".", "unreached/self")
	write("loop/cm.yaml", strings.Replace(cm, "%s", "loop", 1)) // no kustomization: the folder is listed
	link(".", "loop/self")
	write("listed-escape/cm.yaml", strings.Replace(cm, "%s", "listed", 1))
	link("../../secret.yaml", "listed-escape/stolen.yaml")
	// A FIFO would block a reader forever: refused where reached,
	// harmless elsewhere.
	write("fifo/kustomization.yaml", "resources: [pipe.yaml]\n")
	if err := syscall.Mkfifo(filepath.Join(root, "fifo", "pipe.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "unreached", "pipe.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}

	opts := generators.Options{Root: root}
	refused := map[string]struct {
		reason string
		file   string
		text   string
	}{
		"escape":        {"a resource linking outside", "escape/cm.yaml", "outside the root"},
		"chain":         {"a resource linking outside through another link", "chain/cm.yaml", "outside the root"},
		"dir-escape":    {"a base folder linking outside", "dir-escape/base", "outside the root"},
		"patch-escape":  {"a patch through a folder link leaving the root", "patch-escape/linked/cm.yaml", "outside the root"},
		"loop":          {"a loop in a listed folder", "loop/self", "symlink loop"},
		"listed-escape": {"a listed YAML file linking outside", "listed-escape/stolen.yaml", "outside the root"},
		"file-in-root":  {"a file linking to another kustomization's folder", "file-in-root/kustomization.yaml", "load restrictor RootOnly"},
		"fifo":          {"a FIFO the kustomization lists", "fifo/pipe.yaml", "not a regular file or folder"},
	}
	for name, tc := range refused {
		t.Run(name, func(t *testing.T) {
			_, err := Generator{}.Generate(t.Context(), newSpec(root, name, nil), opts)
			var me *manifest.Error
			if !errors.Is(err, ErrKustomization) || !errors.As(err, &me) || me.File != filepath.Join(root, filepath.FromSlash(tc.file)) || !strings.Contains(err.Error(), tc.text) {
				t.Errorf("%s: want ErrKustomization at %s with %q, got %v", tc.reason, tc.file, tc.text, err)
			}
		})
	}
	for name, want := range map[string]string{"inside": "extra,real", "unreached": "unreached", "dir-in-root": "shared"} {
		t.Run(name, func(t *testing.T) {
			res, err := Generator{}.Generate(t.Context(), newSpec(root, name, nil), opts)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, o := range res.Objects {
				names = append(names, o.Name())
			}
			if got := strings.Join(names, ","); got != want {
				t.Errorf("got %v, want %s", got, want)
			}
		})
	}
}

// panicFS panics when kustomize reads a file.
type panicFS struct{ filesys.FileSystem }

func (panicFS) ReadFile(string) ([]byte, error) { panic("boom") }

// TestPanicBecomesError: a kustomize panic is an error and the build
// lock is released.
func TestPanicBecomesError(t *testing.T) {
	fsys := filesys.MakeFsInMemory()
	if err := fsys.MkdirAll("/k"); err != nil {
		t.Fatal(err)
	}
	if err := fsys.WriteFile("/k/kustomization.yaml", []byte("resources: []\n")); err != nil {
		t.Fatal(err)
	}
	_, err := kustomize(t.Context(), panicFS{fsys}, "/k")
	if err == nil || !strings.Contains(err.Error(), "kustomize panicked: boom") {
		t.Fatalf("got %v", err)
	}
	generate(t, newSpec(fixtures, "with-components", nil), generators.Options{}) // the lock is free
}
