//lint:file-ignore SA1019 kustomizeDeprecations sets every deprecated kustomize field on purpose: kustomize's own CheckDeprecatedFields then gives the exact lines to drop

package main

import (
	"bufio"
	"io"
	"os"

	"sigs.k8s.io/kustomize/api/types"

	"github.com/wavesmith/wavesmith/internal/argocdplugin"
)

// kustomizeDeprecations returns the lines kustomize's api prints on
// os.Stderr (internal/target/kusttarget.go, "%v\n") for a kustomization
// using deprecated fields. wavesmith reports the same as its own warning
// (generators/kustomize), located, prefixed and silenced by -q. The lines
// are kustomize's own messages: a Kustomization with every deprecated
// field set.
func kustomizeDeprecations() map[string]bool {
	k := types.Kustomization{
		Bases:                 []string{},
		CommonLabels:          map[string]string{},
		ImageTags:             []types.Image{},
		PatchesJson6902:       []types.Patch{},
		PatchesStrategicMerge: []types.PatchStrategicMerge{},
		Vars:                  []types.Var{},
	}
	drop := map[string]bool{}
	if w := k.CheckDeprecatedFields(); w != nil {
		for _, m := range *w {
			drop[m+"\n"] = true
		}
	}
	return drop
}

// filterStderr replaces os.Stderr, once, before any goroutine of
// wavesmith's starts, by a pipe whose reader forwards every line to the
// real standard error (through the Argo CD prefix, as wavesmith's own
// messages) but kustomize's raw deprecation lines. It returns the real
// standard error, for wavesmith's own messages, and a function that puts
// os.Stderr back and waits until everything written to the pipe was
// forwarded: call it on every way out (main does, before os.Exit, also
// after a panic). Swapping os.Stderr around each kustomize build instead
// would race with the renders running in parallel.
func filterStderr(getenv func(string) string) (real *os.File, restore func()) {
	real = os.Stderr
	r, w, err := os.Pipe()
	if err != nil {
		return real, func() {}
	}
	os.Stderr = w
	done := make(chan struct{})
	go func() {
		defer close(done)
		forwardStderr(r, argocdplugin.Stderr(real, getenv), kustomizeDeprecations())
		r.Close()
	}()
	return real, func() {
		os.Stderr = real
		w.Close() // the reader sees EOF once every write was read
		<-done
	}
}

// forwardStderr copies r to out line by line, dropping the lines in drop.
// A line longer than the buffer is forwarded in pieces (no message to drop
// is that long); a last line without a newline is forwarded at EOF.
func forwardStderr(r io.Reader, out io.Writer, drop map[string]bool) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 && !(err == nil && drop[string(line)]) {
			_, _ = out.Write(line) // nowhere to report a failing stderr
		}
		if err != nil && err != bufio.ErrBufferFull {
			return // EOF: every writer is done (restore closed the pipe)
		}
	}
}
