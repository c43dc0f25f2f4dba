// Package testkit is the one test kit of the nested test modules (test/*):
// finding the tools make builds into bin/, deciding whether a tool-driven
// test runs, skips or fails, finding the envtest binaries, running a
// process for the length of a test, and collecting its output.
//
// It is a module of its own, without dependencies, because each nested
// module pins its own k8s.io versions and cannot require the root module
// (a replace directive points each one here). It follows the rules of the
// root module's internal/testtool with the same variables:
//
//   - go test -short skips every tool-driven test, saying so;
//   - make sets RequireEnv: every tool is required, a missing one fails;
//   - otherwise a test whose tool is missing fails, naming the tool and
//     'make test': only -short skips.
//
// make also computes one digest of what go test's result cache cannot see
// (the tools by content, the files outside the module the tests and tools
// read: hack/test-inputs.sh) and passes it as InputsEnv; a test that
// reads it (Inputs, which Tool and EnvtestAssets call) has it in the key
// of its cached result, so a rebuilt tool or a changed example reruns the
// test instead of reporting an old pass.
//
// Starting envtest itself stays in each module: controller-runtime's
// envtest would pin a k8s.io version here.
package testkit

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"
)

// InputsEnv names the variable that holds make's digest of the test inputs.
const InputsEnv = "WAVESMITH_TEST_INPUTS"

// RequireEnv names the variable make sets (to 1): every tool is required.
const RequireEnv = "WAVESMITH_REQUIRE_TOOLS"

var digest = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Required reports whether the tools are required (make sets RequireEnv).
func Required() bool { return os.Getenv(RequireEnv) != "" }

// Short skips the running test under go test -short, unless the tools are
// required.
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
		t.Skipf("%s: skipped under -short; 'make test' in the repository root builds every tool into bin/ and runs every test", msg)
		return
	}
	t.Fatalf("%s: run 'make test' in the repository root, which builds it into bin/ (or go test -short to leave the tool-driven tests out)", msg)
}

// Inputs declares that the running test depends on inputs go test's cache
// cannot see, by reading InputsEnv. Under make (RequireEnv set) the digest
// must be there; by hand it may be unset, and go test may then answer a
// later run from its cache although a tool was rebuilt (use -count=1).
// A value that is not a digest fails the test.
func Inputs(t testing.TB) {
	t.Helper()
	switch v := os.Getenv(InputsEnv); {
	case v == "" && Required():
		t.Fatalf("%s is not set: run the tests through make in the repository root (make test, make e2e, make parity, make hostile), or set it to the output of 'bash hack/test-inputs.sh' there", InputsEnv)
	case v != "" && !digest.MatchString(v):
		t.Fatalf("%s=%q: want the sha256 digest that hack/test-inputs.sh prints", InputsEnv, v)
	}
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
	// syscall.Stat, not os.Stat: go test records what os.Stat looks at, and
	// a relinked but identical binary would rerun the test; the digest
	// Inputs reads covers the tool's content.
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

// EnvtestAssets returns the folder holding kube-apiserver and etcd,
// KUBEBUILDER_ASSETS (make sets it). It calls Short and Inputs; missing
// binaries fail or skip the test (Missing).
func EnvtestAssets(t testing.TB) string {
	t.Helper()
	Short(t)
	Inputs(t)
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		Missing(t, "KUBEBUILDER_ASSETS is not set (build kube-apiserver and etcd with 'make envtest' and set it to bin/)")
	}
	for _, b := range []string{"kube-apiserver", "etcd"} {
		var st syscall.Stat_t
		if err := syscall.Stat(filepath.Join(assets, b), &st); err != nil {
			Missing(t, "envtest needs %s in %s (build it with 'make envtest')", b, assets)
		}
	}
	abs, err := filepath.Abs(assets)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// RepoRoot is the wavesmith checkout holding the test's module: the
// nearest folder above the test's working folder with hack/test-inputs.sh.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "hack", "test-inputs.sh")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("no wavesmith checkout (hack/test-inputs.sh) above %s", dir)
		}
	}
}

// LockedBuffer collects a process's output while the test reads it.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is what was written so far.
func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Tail is the last n lines of s, after a line counting those before.
func Tail(s string, n int) string {
	lines := bytes.Split([]byte(s), []byte("\n"))
	if len(lines) > n {
		lines = append([][]byte{[]byte(fmt.Sprintf("[%d lines before]", len(lines)-n))}, lines[len(lines)-n:]...)
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// Process is a binary run for the length of a test, as it runs in a pod.
type Process struct {
	Name string
	Logs LockedBuffer
	done chan struct{}
}

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// StartProcess runs bin with args, the test's environment and env added,
// until the test ends (SIGINT, then a kill after 10 s). A process that
// exits while the test runs fails it; the last logLines lines of its
// output are logged when the test fails.
func StartProcess(t testing.TB, bin string, env []string, logLines int, args ...string) *Process {
	t.Helper()
	p := &Process{Name: filepath.Base(bin), done: make(chan struct{})}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = &p.Logs, &p.Logs
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", p.Name, err)
	}
	var (
		mu       sync.Mutex
		stopping bool
	)
	go func() {
		err := cmd.Wait()
		mu.Lock()
		if !stopping {
			t.Errorf("%s exited while the test ran: %v", p.Name, err)
		}
		mu.Unlock()
		close(p.done)
	}()
	t.Cleanup(func() {
		mu.Lock()
		stopping = true
		mu.Unlock()
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", p.Name, Tail(p.Logs.String(), logLines))
		}
	})
	return p
}

// MainSkip is for a TestMain that checks tools before m.Run: missing says
// which is missing (nil: none). It returns why the package's tool-driven
// tests skip ("" when they run: only under -short), or an error when
// they must fail instead (a tool missing). Call flag.Parse before it.
func MainSkip(missing error) (skip string, err error) {
	switch {
	case testing.Short() && !Required():
		return "runs tools: skipped under -short ('make test' runs it with every tool)", nil
	case missing != nil:
		return "", fmt.Errorf("%w: run 'make test' in the repository root, which builds it into bin/ (or go test -short to leave the tool-driven tests out)", missing)
	}
	return "", nil
}
