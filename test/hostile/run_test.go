package hostile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Bounds every run of the binary is held to.
const (
	// maxRSS is the peak resident memory a run may reach (rusage Maxrss):
	// a hostile input must be refused long before it costs a gigabyte.
	maxRSS = 1 << 30
	// addressSpace is a safety net for the shared machine, not the
	// assertion: the child's RLIMIT_AS, so that a runaway allocation
	// crashes the child (and fails its case) instead of the machine.
	addressSpace = 2 << 30
	// killAfter is a generous wall-clock bound; its expiry fails the case.
	killAfter = 60 * time.Second
	// stdoutKeep is how much of stdout a run keeps; the rest is counted.
	stdoutKeep = 1 << 20
	// stderrKeep is how much of stderr a run keeps; the rest is counted.
	stderrKeep = 1 << 20
)

// binary is the wavesmith under test ($WAVESMITH_BIN); TestMain checks it.
var binary string

// run is one execution of the binary.
type run struct {
	dir   string   // working folder
	env   []string // the whole environment (nothing is inherited)
	stdin string   // file to read stdin from; "" for an empty stdin
	// stdout is a file stdout writes to (/dev/full); "" to capture it.
	stdout string
	args   []string
	// timeout replaces killAfter when set.
	timeout time.Duration
}

// outcome is what a run did, observed from outside.
type outcome struct {
	code                int
	stdout, stderr      []byte
	stdoutLen, errLen   int64
	maxRSS              int64 // bytes
	wall                time.Duration
	timedOut            bool
	signaled            syscall.Signal // non-zero when killed by a signal
	startErr, waitError error
}

// cappedBuffer keeps the first n bytes written and counts the rest.
type cappedBuffer struct {
	buf   bytes.Buffer
	keep  int
	total int64
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.total += int64(len(p))
	if room := c.keep - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// baseEnv is the environment of every run: nothing of the caller's (no
// ARGOCD_*, KUBE_* or HOME leaks in), a private HOME and TMPDIR under the
// case's root, so that anything the binary writes there is seen.
func baseEnv(root string) []string {
	return []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"HOME=" + filepath.Join(root, "home"),
		"TMPDIR=" + filepath.Join(root, "tmp"),
		"XDG_CACHE_HOME=" + filepath.Join(root, "home", ".cache"),
		"XDG_CONFIG_HOME=" + filepath.Join(root, "home", ".config"),
		"LANG=C",
		// The child runs under an address-space limit (ulimit -v), which
		// counts reserved, not used, memory: glibc reserves 64 MiB of
		// address space per thread's malloc arena, so that a cgo build
		// with many threads reached the limit at idle (1.7 GB reserved,
		// 50 MB resident; out of memory in 14 of 20 runs of fn on
		// /dev/zero). Two arenas keep the limit about what the binary
		// uses; the released binaries are static (CGO_ENABLED=0) and
		// have no such arenas.
		"MALLOC_ARENA_MAX=2",
	}
}

// start launches the binary under the address-space limit (through sh's
// ulimit, which then execs it: the child whose rusage is read is the
// binary itself).
func (r run) command(ctx context.Context) *exec.Cmd {
	script := "ulimit -v " + strconv.Itoa(addressSpace>>10) + " && exec \"$0\" \"$@\""
	cmd := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", script, binary}, r.args...)...)
	cmd.Dir = r.dir
	cmd.Env = r.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// exec runs the binary to its end (or the kill timeout).
func (r run) exec(t testing.TB) outcome {
	t.Helper()
	timeout := r.timeout
	if timeout == 0 {
		timeout = killAfter
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := r.command(ctx)
	var stdin io.Reader = strings.NewReader("")
	if r.stdin != "" {
		f, err := os.Open(r.stdin)
		if err != nil {
			t.Fatalf("opening stdin %s: %v", r.stdin, err)
		}
		defer f.Close()
		stdin = f
		cmd.Stdin = f
	} else {
		cmd.Stdin = stdin
	}
	stdout := &cappedBuffer{keep: stdoutKeep}
	stderr := &cappedBuffer{keep: stderrKeep}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if r.stdout != "" {
		f, err := os.OpenFile(r.stdout, os.O_WRONLY, 0)
		if err != nil {
			t.Fatalf("opening stdout %s: %v", r.stdout, err)
		}
		defer f.Close()
		cmd.Stdout = f
	}
	begin := time.Now()
	err := cmd.Run()
	o := outcome{wall: time.Since(begin), stdout: stdout.buf.Bytes(), stderr: stderr.buf.Bytes(), stdoutLen: stdout.total, errLen: stderr.total}
	if ctx.Err() != nil {
		o.timedOut = true
	}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
	case cmd.ProcessState == nil:
		o.startErr = err
		return o
	default:
		o.waitError = err
	}
	ps := cmd.ProcessState
	o.code = ps.ExitCode()
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		o.signaled = ws.Signal()
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		o.maxRSS = ru.Maxrss << 10 // kilobytes on Linux
	}
	return o
}

// crash describes a run that did not end by itself with an exit code, or
// ended in a Go runtime crash; "" otherwise.
func (o outcome) crash() string {
	switch {
	case o.startErr != nil:
		return fmt.Sprintf("could not start: %v", o.startErr)
	case o.timedOut:
		return fmt.Sprintf("killed after the %s wall-clock bound (a hostile input must be refused quickly)", killAfter)
	case o.signaled != 0:
		return fmt.Sprintf("killed by signal %v", o.signaled)
	case bytes.Contains(o.stderr, []byte("fatal error: runtime: out of memory")), bytes.Contains(o.stderr, []byte("fatal error: out of memory")):
		return fmt.Sprintf("ran out of memory: it hit the %d GiB address-space safety limit", addressSpace>>30)
	case bytes.Contains(o.stderr, []byte("panic: ")), bytes.Contains(o.stderr, []byte("fatal error: ")), bytes.Contains(o.stderr, []byte("goroutine 1 [")):
		return "crashed (Go panic or fatal error)"
	}
	return ""
}

// summary is a one-line account of the run for logs and failures.
func (o outcome) summary() string {
	return fmt.Sprintf("exit %d, %d bytes on stdout, peak RSS %.1f MiB, %s", o.code, o.stdoutLen, float64(o.maxRSS)/(1<<20), o.wall.Round(time.Millisecond))
}
