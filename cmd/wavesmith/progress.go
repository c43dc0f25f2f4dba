package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"
)

// progress shows, on a terminal's standard error only, how many specs a
// long render has done: nothing for renders under a second, nothing when
// standard error is a file or a pipe (CI logs, Argo CD).
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	start   time.Time
	last    time.Time
	printed bool
}

func newProgress(c *cobra.Command, quiet bool) *progress {
	p := &progress{start: time.Now()}
	if quiet {
		return p
	}
	if f, ok := c.ErrOrStderr().(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.w = f
		}
	}
	return p
}

func (p *progress) update(done, total int) { p.report("rendering", "specs", done, total) }

// report prints "doing: done/total things" over the line before, at most
// five times a second, once the work has taken a second.
func (p *progress) report(doing, things string, done, total int) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if now.Sub(p.start) < time.Second || now.Sub(p.last) < 200*time.Millisecond && done < total {
		return
	}
	p.last, p.printed = now, true
	fmt.Fprintf(p.w, "\r%s: %d/%d %s", doing, done, total, things)
}

func (p *progress) done() {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.printed {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
