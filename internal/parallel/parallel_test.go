package parallel

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestDoCallsEach: every index once, whatever n.
func TestDoCallsEach(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 63, 64, 65, 1000, 10007} {
		var mu sync.Mutex
		seen := make([]int, n)
		Do(n, func(i int) {
			mu.Lock()
			seen[i]++
			mu.Unlock()
		})
		for i, c := range seen {
			if c != 1 {
				t.Fatalf("n=%d: index %d called %d times", n, i, c)
			}
		}
	}
}

// TestDoSpreadsFewItems: with fewer items than a chunk (64), two workers
// run them at once (before, one worker took them all). The first item
// waits for a second to start; run one after another, it waits in vain,
// until a minute bounds the test (checked with the old chunk of 64).
func TestDoSpreadsFewItems(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	var mu sync.Mutex
	count, met := 0, false
	two := make(chan struct{})
	Do(8, func(int) {
		mu.Lock()
		count++
		first := count == 1
		if count == 2 {
			close(two)
		}
		mu.Unlock()
		if !first {
			return
		}
		select {
		case <-two:
			mu.Lock()
			met = true
			mu.Unlock()
		case <-time.After(time.Minute):
		}
	})
	if !met {
		t.Fatal("8 items ran one at a time")
	}
}
