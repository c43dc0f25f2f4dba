// Package testtool finds the tools that tests run as processes (the
// Makefile builds them into bin/) and declares to go test's result cache
// the inputs it cannot see by itself.
//
// go test caches a package's passing result, keyed on the package's
// compiled test binary and on the files and environment variables the test
// process itself read. A tool the test runs, and the files that tool
// reads, are invisible to it: without more, a rebuilt bin/wavesmith or an
// edited example would be answered with the old pass. make test therefore
// computes one digest of those inputs (hack/test-inputs.sh: the tools by
// content, the repository's files other than package Go sources) and
// passes it as WAVESMITH_TEST_INPUTS; a test that reads it (Inputs, which
// Path calls) has the digest in its cache key.
package testtool

import (
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
)

// InputsEnv names the environment variable that holds make test's digest
// of the inputs go test cannot see.
const InputsEnv = "WAVESMITH_TEST_INPUTS"

var digest = regexp.MustCompile(`^[0-9a-f]{64}$`)

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
// at the root of the module. A missing tool fails the test, which never
// skips, with how to build it. Path calls Inputs.
func Path(t testing.TB, env, name string) string {
	t.Helper()
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
		t.Fatalf("%s not found at %s (%v): run 'make test', which builds it into bin/ (or set %s)", name, p, err, env)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
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
