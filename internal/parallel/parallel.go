// Package parallel runs independent work on GOMAXPROCS goroutines, each
// result landing in its input's slot so that the outcome does not depend
// on scheduling.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Do calls fn(0..n-1) on GOMAXPROCS goroutines and returns when every
// call has returned.
func Do(n int, fn func(i int)) {
	workers := runtime.GOMAXPROCS(0)
	if workers > n {
		workers = n
	}
	if workers <= 1 {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	// Items are handed out in chunks (fewer atomic operations for many
	// small items), small enough that every worker gets some: a few slow
	// items (chart Components) spread over the cores too.
	chunk := max(1, min(64, n/(4*workers)))
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				start := int(next.Add(int64(chunk))) - chunk
				if start >= n {
					return
				}
				end := min(start+chunk, n)
				for i := start; i < end; i++ {
					fn(i)
				}
			}
		}()
	}
	wg.Wait()
}
