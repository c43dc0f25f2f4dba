// Package testinputs lets the nested test modules (test/*) declare to go
// test's result cache what it cannot see of their inputs: the tools in
// bin/ they run as processes, and the repository's files outside their
// module that they and those tools read. make computes one digest of those
// (hack/test-inputs.sh) and passes it as WAVESMITH_TEST_INPUTS; a test
// that reads it has it in the key of its cached result, so a rebuilt tool
// or a changed example reruns the test instead of reporting an old pass.
//
// It is a module of its own, without dependencies, because each nested
// module pins its own k8s.io versions and cannot require the root module.
// The root module's tests use internal/testtool, which reads the same
// variable.
package testinputs

import (
	"os"
	"regexp"
	"testing"
)

// Env names the variable that holds make's digest of the test inputs.
const Env = "WAVESMITH_TEST_INPUTS"

var digest = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Require fails the test unless Env holds the digest. The nested modules'
// tests already need the tools make builds and names in the environment;
// without the digest too, go test would answer their next run from its
// cache after a tool was rebuilt.
func Require(t testing.TB) {
	t.Helper()
	switch v := os.Getenv(Env); {
	case v == "":
		t.Fatalf("%s is not set: run the tests through make in the repository root (make test, make e2e, make parity, make hostile), or set it to the output of 'bash hack/test-inputs.sh' there", Env)
	case !digest.MatchString(v):
		t.Fatalf("%s=%q: want the sha256 digest that hack/test-inputs.sh prints", Env, v)
	}
}
