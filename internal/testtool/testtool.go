// Package testtool finds the tools that tests run as processes (the
// Makefile builds them into bin/), decides whether a tool-driven test runs,
// skips or fails, and declares to go test's result cache the inputs it
// cannot see by itself.
//
// Tests come in two tiers. go test -short ./... (make unit) runs the unit
// tests only: a test that needs a tool skips, saying so. make test builds
// every tool and sets RequireEnv: then a tool-driven test runs, -short or
// not, and a missing tool fails it. Run by hand without -short, a
// tool-driven test runs and a missing tool fails it, naming the tool and
// 'make test': only -short skips.
//
// go test caches a package's passing result, keyed on the package's
// compiled test binary and on the files and environment variables the test
// process itself read. A tool the test runs, and the files that tool
// reads, are invisible to it: without more, a rebuilt bin/wavesmith or an
// edited example would be answered with the old pass. make test therefore
// computes one digest of those inputs (hack/test-inputs.sh: the tools by
// content, the files of the repository the tests and tools read) and
// passes it as WAVESMITH_TEST_INPUTS; a test that reads it (Inputs, which
// Path calls) has the digest in its cache key.
//
// The nested test modules (test/*) use test/testkit, which follows the
// same rules with the same variables.
package testtool

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
)

// InputsEnv names the environment variable that holds make test's digest
// of the inputs go test cannot see.
const InputsEnv = "WAVESMITH_TEST_INPUTS"

// RequireEnv names the environment variable make test sets (to 1): every
// tool is required, a missing one fails its test instead of skipping it.
const RequireEnv = "WAVESMITH_REQUIRE_TOOLS"

var digest = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Required reports whether the tools are required (RequireEnv is set, as
// make test and CI set it).
func Required() bool { return os.Getenv(RequireEnv) != "" }

// Short skips the running test under go test -short, unless the tools are
// required. Tests that drive tools or a control plane call it first (Path
// does).
func Short(t testing.TB) {
	t.Helper()
	if testing.Short() && !Required() {
		t.Skip("runs tools: skipped under -short ('make test' runs it with every tool)")
	}
}

// Missing ends a test whose tool is missing, with what is missing
// (format, args): under go test -short it skips (the tool-driven tests
// are not the inner loop), otherwise it fails loudly and says how to get
// the tool. A tool-driven test never skips for any other reason.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if testing.Short() && !Required() {
		t.Skipf("%s: skipped under -short; 'make test' builds every tool into bin/ and runs every test", msg)
		return
	}
	t.Fatalf("%s: run 'make test', which builds it into bin/ (or go test -short to leave the tool-driven tests out)", msg)
}

// MainSkip is for a TestMain that needs tools before m.Run: missing says
// which is missing (nil: none). It returns why the package's tool-driven
// tests skip ("" when they run: only under -short), or an error when
// they must fail instead (a tool missing). Call flag.Parse before it.
func MainSkip(missing error) (skip string, err error) {
	switch {
	case testing.Short() && !Required():
		return "runs tools: skipped under -short ('make test' runs it with every tool)", nil
	case missing != nil:
		return "", fmt.Errorf("%w: run 'make test', which builds it into bin/ (or go test -short to leave the tool-driven tests out)", missing)
	}
	return "", nil
}

// Inputs declares that the running test depends on inputs go test's cache
// cannot see, by reading InputsEnv. Outside make test the variable is
// unset: the test still runs, but go test may then answer a later run
// from its cache although a tool was rebuilt (use -count=1 by hand). A
// value that is not a digest fails the test.
func Inputs(t testing.TB) {
	t.Helper()
	if v := os.Getenv(InputsEnv); v != "" && !digest.MatchString(v) {
		t.Fatalf("%s=%q: want the sha256 digest that hack/test-inputs.sh prints", InputsEnv, v)
	}
}

// Path returns the absolute path of the tool name: the value of the
// environment variable env when set (the Makefile sets it), else bin/name
// at the root of the module. It calls Short and Inputs; a missing tool
// fails or skips the test (Missing).
func Path(t testing.TB, env, name string) string {
	t.Helper()
	Short(t)
	Inputs(t)
	p := os.Getenv(env)
	if p == "" {
		p = filepath.Join(ModuleRoot(t), "bin", name)
	}
	// syscall.Stat, not os.Stat: go test records what os.Stat looks at, and
	// a relinked but identical binary would rerun the test; the digest
	// Inputs reads covers the tool's content.
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		Missing(t, "%s not found at %s (set %s, or build it into bin/)", name, p, env)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// Tool returns the absolute path of the executable the variable env names
// (make exports them all); build says how to build it. It calls Short and
// Inputs; a missing tool fails or skips the test (Missing).
func Tool(t testing.TB, env, build string) string {
	t.Helper()
	Short(t)
	Inputs(t)
	p := os.Getenv(env)
	if p == "" {
		Missing(t, "%s is not set (build the tool with '%s' and set it to its path)", env, build)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		Missing(t, "%s=%s: %v (build it with '%s')", env, p, err, build)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Mode&0o111 == 0 {
		t.Fatalf("%s=%s is not an executable file; build it with '%s'", env, p, build)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// EnvtestAssets returns the folder holding kube-apiserver and etcd:
// KUBEBUILDER_ASSETS when set (the Makefile sets it), else bin (relative
// to the test's folder). It calls Short and Inputs; missing binaries fail
// or skip the test (Missing).
func EnvtestAssets(t testing.TB, bin string) string {
	t.Helper()
	Short(t)
	Inputs(t)
	assets, err := envtestAssets(bin)
	if err != nil {
		Missing(t, "%v", err)
	}
	return assets
}

// EnvtestAssetsMain is EnvtestAssets for a TestMain: the folder, and the
// error naming a missing binary (for MainSkip).
func EnvtestAssetsMain(bin string) (string, error) { return envtestAssets(bin) }

func envtestAssets(bin string) (string, error) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = bin
	}
	assets, err := filepath.Abs(assets)
	if err != nil {
		return "", err
	}
	for _, b := range []string{"kube-apiserver", "etcd"} {
		var st syscall.Stat_t
		if err := syscall.Stat(filepath.Join(assets, b), &st); err != nil {
			return "", fmt.Errorf("envtest needs %s in %s (set KUBEBUILDER_ASSETS, or 'make envtest')", b, assets)
		}
	}
	return assets, nil
}

// ModuleRoot is the folder of the nearest go.mod above the test's working
// folder (its package's folder).
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("no go.mod above %s", dir)
		}
	}
}
