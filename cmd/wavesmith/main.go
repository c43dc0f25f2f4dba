// Command wavesmith renders Kaoto and Component specs into labelled
// Kubernetes manifests with wave and policy annotations for Argo CD and
// Flux. It only parses flags and wires them to package render.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/wavesmith/wavesmith/internal/argocdplugin"
	"github.com/wavesmith/wavesmith/manifest"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // bad input, or a stale tree for check
	exitUsage = 2
)

func main() {
	setMemoryPolicy(os.Getenv)
	stderr, restore := filterStderr(os.Getenv)
	code := func() int {
		defer func() {
			if p := recover(); p != nil {
				restore() // forward what was written before the panic
				panic(p)
			}
		}()
		return run(os.Args[1:], os.Stdin, os.Stdout, stderr)
	}()
	restore()
	os.Exit(code)
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	stderr = argocdplugin.Stderr(stderr, os.Getenv) // names the Argo CD application, if any
	// SIGINT and SIGTERM cancel the command's context: a tree being
	// written is abandoned, its temporary folder and lock removed
	// (outtree.WriteIn). A second signal kills as usual.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop()
	}()
	cmd := newRootCommand(stdin, stdout, stderr)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var silent silentError
	if errors.As(err, &silent) {
		return silent.code
	}
	var es manifest.Errors
	if errors.As(err, &es) {
		for _, e := range es {
			fmt.Fprintf(stderr, "error: %v\n", e)
		}
	} else {
		fmt.Fprintf(stderr, "error: %v\n", err)
	}
	var u usageError
	if errors.As(err, &u) {
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", u.cmd)
		return exitUsage
	}
	return exitError
}

// usageError is a mistake in how a command was called.
type usageError struct {
	cmd string
	err error
}

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// silentError carries an exit code whose message was already printed.
type silentError struct{ code int }

func (e silentError) Error() string { return fmt.Sprintf("exit %d", e.code) }
