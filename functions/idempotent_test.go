package functions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestKptRerunContract checks the KRM contract with the real kpt: for any
// sequence of functionConfigs, running the function on its own output with
// config C gives exactly (byte for byte, every file of the package) what
// running it once on the package as the user wrote it with C gives. The
// function must never read what it wrote (an Argo CD wave on a spec) back
// as the user's choice.
func TestKptRerunContract(t *testing.T) {
	kpt := lookTool(t, "KPT_BIN", "kpt")
	// A config is the arguments after kpt fn eval's "--" (a ConfigMap).
	fresh := map[string]map[string]string{}
	once := func(cfg string) map[string]string {
		if got, ok := fresh[cfg]; ok {
			return got
		}
		pkg := copyPkg(t)
		evalKpt(t, kpt, pkg, cfg)
		fresh[cfg] = files(t, pkg)
		return fresh[cfg]
	}
	for _, seq := range [][]string{
		{"wave=0", "wave=3", "wave=0", "wave=5"},
		{"wave=3", "wave=3", "wave=5", "wave=3"},
		{"wave=4", "", "wave=2"},
		{"platform=openshift wave=2", "wave=0", "platform=openshift"},
		{"wave=-2", "wave=1", "platform=openshift wave=-2"},
	} {
		t.Run(strings.Join(seq, ","), func(t *testing.T) {
			pkg := copyPkg(t)
			for i, cfg := range seq {
				evalKpt(t, kpt, pkg, cfg)
				if diff := cmp.Diff(once(cfg), files(t, pkg)); diff != "" {
					t.Fatalf("after %q, run %d with %q differs from one run with it on the package as written: -once +rerun:\n%s",
						strings.Join(seq[:i], ","), i+1, cfg, diff)
				}
			}
		})
	}
}

// TestKptRerunKptfile: the same contract through a Kptfile pipeline (kpt
// fn render), the functionConfig changing between runs.
func TestKptRerunKptfile(t *testing.T) {
	kpt := lookTool(t, "KPT_BIN", "kpt")
	kptfile := func(wave string) string {
		return "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\npipeline:\n  mutators:\n  - exec: " + wavesmithBin + " fn\n    configMap:\n      wave: \"" + wave + "\"\n"
	}
	render := func(pkg, wave string) map[string]string {
		t.Helper()
		if err := os.WriteFile(filepath.Join(pkg, "Kptfile"), []byte(kptfile(wave)), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := run(t, pkg, kpt, "fn", "render", "--allow-exec", "."); err != nil {
			t.Fatalf("kpt fn render with wave %s: %v\n%s", wave, err, out)
		}
		got := files(t, pkg)
		delete(got, "Kptfile") // kpt records its render status there
		return got
	}
	pkg := copyPkg(t)
	for _, wave := range []string{"0", "3", "0", "5", "5"} {
		got := render(pkg, wave)
		if diff := cmp.Diff(render(copyPkg(t), wave), got); diff != "" {
			t.Fatalf("wave %s on the function's output: -once +rerun:\n%s", wave, diff)
		}
	}
}

// TestKptUserWaveAfterRerun: the function's own Argo CD wave on a spec
// does not become the user's: after runs with wave 0 then 3, the next run
// with wave 0 puts the children in wave 0, and a wavesmith.io/apply-order
// set by hand is taken (it contradicted the written wave 3 before).
func TestKptUserWaveAfterRerun(t *testing.T) {
	kpt := lookTool(t, "KPT_BIN", "kpt")
	pkg := copyPkg(t)
	child := filepath.Join(pkg, "demo/kaoto-designer/deployment-designer.yaml")
	wave := func() string {
		t.Helper()
		b, err := os.ReadFile(child)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, "argocd.argoproj.io/sync-wave:") {
				return strings.Trim(strings.TrimSpace(strings.SplitN(l, ":", 2)[1]), `"'`)
			}
		}
		t.Fatalf("no sync-wave on the child:\n%s", b)
		return ""
	}
	for _, step := range []struct{ cfg, want string }{{"wave=0", "0"}, {"wave=3", "3"}, {"wave=0", "0"}, {"wave=3", "3"}, {"wave=5", "5"}} {
		evalKpt(t, kpt, pkg, step.cfg)
		if got := wave(); got != step.want {
			t.Fatalf("after %s the children are in wave %s, want %s", step.cfg, got, step.want)
		}
	}
	spec := filepath.Join(pkg, "kaoto.yaml")
	b, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), "  annotations:\n", "  annotations:\n    wavesmith.io/apply-order: \"1\"\n", 1)
	if s == string(b) {
		t.Fatalf("no annotations on the spec after a run:\n%s", b)
	}
	if err := os.WriteFile(spec, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	evalKpt(t, kpt, pkg, "wave=3")
	if got := wave(); got != "1" {
		t.Fatalf("with apply-order 1 set by hand the children are in wave %s, want 1", got)
	}
}

func evalKpt(t *testing.T, kpt, pkg, cfg string) {
	t.Helper()
	args := []string{"fn", "eval", ".", "--exec", wavesmithBin + " fn"}
	if cfg != "" {
		args = append(append(args, "--"), strings.Fields(cfg)...)
	}
	if out, err := run(t, pkg, kpt, args...); err != nil {
		t.Fatalf("kpt %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
