package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/internal/testtool"
)

// TestKustomizeDeprecationOnce runs the built binary on a kustomization
// using bases and commonLabels: each deprecation is reported once, as
// wavesmith's own warning (prefixed, located; under Argo CD with the
// application's prefix), never kustomize's raw line, and -q silences it.
// The control: kustomize itself prints the raw lines for the same folder.
func TestKustomizeDeprecationOnce(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"app/overlay/kustomization.yaml": "bases:\n- ../base\ncommonLabels:\n  team: a\n",
		"app/base/kustomization.yaml":    "resources:\n- cm.yaml\n",
		"app/base/cm.yaml":               "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata: {k: v}\n",
		"comp.yaml":                      "apiVersion: wavesmith.io/v1alpha1\nkind: Component\nmetadata:\n  name: app\n  namespace: apps\nspec:\n  source:\n    kustomization:\n      path: app/overlay\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw := []string{
		"# Warning: 'bases' is deprecated. Please use 'resources' instead. Run 'kustomize edit fix' to update your Kustomization automatically.\n",
		"# Warning: 'commonLabels' is deprecated. Please use 'labels' instead. Run 'kustomize edit fix' to update your Kustomization automatically.\n",
	}
	drop := kustomizeDeprecations()
	for _, r := range raw {
		if !drop[r] {
			t.Fatalf("kustomize's deprecation messages changed: %q is not among %v", r, drop)
		}
	}

	// The control: without wavesmith's filter, kustomize prints them.
	var kerr bytes.Buffer
	k := exec.Command(testtool.Path(t, "KUSTOMIZE_BIN", "kustomize"), "build", filepath.Join(dir, "app", "overlay"))
	k.Stdout, k.Stderr = io.Discard, &kerr
	if err := k.Run(); err != nil {
		t.Fatalf("kustomize build: %v\n%s", err, kerr.String())
	}
	for _, r := range raw {
		if !strings.Contains(kerr.String(), r) {
			t.Errorf("control: kustomize build does not print %q; stderr:\n%s", r, kerr.String())
		}
	}

	t.Chdir(dir)
	warning := func(prefix, field string) string {
		return prefix + "warning: app/overlay/kustomization.yaml: Component.wavesmith.io/apps/app: " + strings.TrimSuffix(raw[map[string]int{"bases": 0, "commonLabels": 1}[field]], "\n")
	}
	for name, tc := range map[string]struct {
		env  []string
		args []string
		want []string
	}{
		"Render": {args: []string{"render", "."}, want: []string{warning("", "bases"), warning("", "commonLabels")}},
		"Quiet":  {args: []string{"render", "-q", "."}},
		"ArgoCD": {env: []string{"ARGOCD_APP_NAME=shop", "ARGOCD_APP_NAMESPACE=argocd", "ARGOCD_APP_SOURCE_PATH=."}, args: []string{"render"}, want: []string{warning("wavesmith (argocd app shop): ", "bases"), warning("wavesmith (argocd app shop): ", "commonLabels")}},
		"Stdin":  {args: []string{"render", "-q", "-"}},
	} {
		t.Run(name, func(t *testing.T) {
			for _, e := range tc.env {
				kv := strings.SplitN(e, "=", 2)
				t.Setenv(kv[0], kv[1])
			}
			stdin := ""
			if tc.args[len(tc.args)-1] == "-" {
				b, err := os.ReadFile("comp.yaml")
				if err != nil {
					t.Fatal(err)
				}
				stdin = string(b)
			}
			code, out, stderr := wavesmithBinaryIn(t, stdin, tc.args...)
			if code != exitOK || !strings.Contains(out, "name: cm") {
				t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, out, stderr)
			}
			var got []string
			for _, l := range strings.SplitAfter(stderr, "\n") {
				if l != "" {
					got = append(got, strings.TrimSuffix(l, "\n"))
				}
			}
			sort.Strings(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
}

// wavesmithBinaryIn runs the built binary (bin/wavesmith, which make
// test builds first) as a process with stdin, as users and CI run it:
// exit code, stdout and stderr.
func wavesmithBinaryIn(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	bin := os.Getenv("WAVESMITH_BIN")
	if bin == "" {
		// The package's folder, as tests that t.Chdir elsewhere first
		// would not find the module from there.
		bin = filepath.Join(packageDir, "..", "..", "bin", "wavesmith")
		t.Setenv("WAVESMITH_BIN", bin)
	}
	cmd := exec.Command(testtool.Path(t, "WAVESMITH_BIN", "wavesmith"), args...)
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errb.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String(), errb.String()
	}
	t.Fatalf("running wavesmith %v: %v", args, err)
	return 0, "", ""
}

// TestForwardStderr: every line but kustomize's deprecations is forwarded,
// in order, a line longer than the buffer and a last line without a
// newline included; nothing is lost when the writer closes.
func TestForwardStderr(t *testing.T) {
	drop := kustomizeDeprecations()
	var dropped string
	for l := range drop {
		dropped = l
		break
	}
	long := strings.Repeat("x", 200<<10) + "\n"
	in := "a\n" + dropped + "b " + dropped + long + dropped + strings.TrimSuffix(dropped, "\n") + "!\n" + "end"
	want := "a\n" + "b " + dropped + long + strings.TrimSuffix(dropped, "\n") + "!\n" + "end"
	var out bytes.Buffer
	forwardStderr(strings.NewReader(in), &out, drop)
	if out.String() != want {
		t.Errorf("forwarded %d bytes, want %d: %q", out.Len(), len(want), firstDiff(out.String(), want))
	}
}

// TestFilterStderrDrains: what is written to os.Stderr before restore
// reaches the real standard error, all of it, and os.Stderr is back.
func TestFilterStderrDrains(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = f
	defer func() { os.Stderr = saved }()
	real, restore := filterStderr(func(string) string { return "" })
	if real != f {
		t.Fatal("wavesmith's own messages must go to the real standard error")
	}
	var want strings.Builder
	for i := range 20000 {
		line := strings.Repeat("y", i%97) + "\n"
		want.WriteString(line)
		if _, err := os.Stderr.WriteString(line); err != nil {
			t.Fatal(err)
		}
		if i%1000 == 0 {
			for l := range kustomizeDeprecations() {
				os.Stderr.WriteString(l)
			}
		}
	}
	restore()
	if os.Stderr != f {
		t.Fatal("restore did not put os.Stderr back")
	}
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != want.String() {
		t.Errorf("got %d bytes, want %d", len(b), want.Len())
	}
}

func firstDiff(a, b string) string {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[max(0, i-20):min(len(a), i+40)]
		}
	}
	return "length differs"
}
