package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestRaisedLimit(t *testing.T) {
	for _, tc := range []struct {
		limit, live, held, want int64
	}{
		{memoryFloor, 0, 0, memoryFloor},
		{memoryFloor, 80 << 20, 105 << 20, memoryFloor},          // a 10,000-Kaoto stream: the floor holds
		{memoryFloor, 100 << 20, 150 << 20, 250 << 20},           // under the floor, with little room left: raised
		{memoryFloor, 200 << 20, 200 << 20, 400 << 20},           // as much as live more
		{memoryFloor, 200 << 20, 275 << 20, 475 << 20},           // on top of what the runtime holds (spans' free slots, metadata)
		{450 << 20, 200 << 20, 290 << 20, 490 << 20},             // a limit near what is held is raised again
		{memoryFloor, 200 << 20, 0, 400 << 20},                   // held unknown: live
		{600 << 20, 200 << 20, 220 << 20, 600 << 20},             // never lowered
		{memoryFloor, 1 << 30, 1 << 30, 2 << 30},                 // a large render collects as with GOGC=100
		{math.MaxInt64 / 4, 1 << 20, 1 << 20, math.MaxInt64 / 4}, // no overflow from a large limit
	} {
		if got := raisedLimit(tc.limit, tc.live, tc.held); got != tc.want {
			t.Errorf("raisedLimit(%d, %d, %d) = %d, want %d", tc.limit, tc.live, tc.held, got, tc.want)
		}
	}
}

// TestMemoryPolicyYieldsToEnvironment: GOGC and GOMEMLIMIT, when set,
// keep what the runtime read from them; unset, the policy's values apply.
func TestMemoryPolicyYieldsToEnvironment(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Cleanup(policyOff)
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

	setMemoryPolicy(env(map[string]string{"GOGC": "100", "GOMEMLIMIT": "1GiB"}))
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC set: GC percent %d, want the environment's 100", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("GOMEMLIMIT set: limit %d, want the environment's (unchanged here)", got)
	}

	setMemoryPolicy(env(nil))
	if got := debug.SetGCPercent(100); got != -1 {
		t.Errorf("GOGC and GOMEMLIMIT unset: GC percent %d, want -1 (the limit alone collects)", got)
	}
	if got := debug.SetMemoryLimit(-1); got < memoryFloor {
		t.Errorf("GOMEMLIMIT unset: limit %d, want at least %d", got, memoryFloor)
	}

	// GOMEMLIMIT alone: the user's limit, which may be off, never the only
	// trigger.
	debug.SetMemoryLimit(math.MaxInt64)
	setMemoryPolicy(env(map[string]string{"GOMEMLIMIT": "off"}))
	if got := debug.SetGCPercent(100); got != gcPercent {
		t.Errorf("GOMEMLIMIT set, GOGC unset: GC percent %d, want %d", got, gcPercent)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("GOMEMLIMIT set: limit %d, want the environment's (unchanged here)", got)
	}

	// GOGC alone: the user's percent (what the runtime read, 77 here),
	// under the policy's limit.
	debug.SetGCPercent(77)
	setMemoryPolicy(env(map[string]string{"GOGC": "77"}))
	if got := debug.SetGCPercent(100); got != 77 {
		t.Errorf("GOGC set, GOMEMLIMIT unset: GC percent %d, want the environment's 77", got)
	}
	if got := debug.SetMemoryLimit(-1); got < memoryFloor {
		t.Errorf("GOGC set, GOMEMLIMIT unset: limit %d, want at least %d", got, memoryFloor)
	}
}

// TestMemoryLimitFollowsLiveHeap: a live heap over the floor raises the
// limit after a collection (to what the runtime holds and as much as is
// live: raisedLimit), so a large render never collects continuously.
func TestMemoryLimitFollowsLiveHeap(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Cleanup(policyOff)
	const floor = 1 << 20
	gen, _ := applyMemoryPolicy(func(string) string { return "" }, floor)
	watchLiveHeap(gen)
	live := make([][]byte, 64)
	for i := range live {
		live[i] = make([]byte, 1<<20) // 64 MiB live
	}
	deadline := time.Now().Add(10 * time.Second)
	for debug.SetMemoryLimit(-1) < 96<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("limit still %d after collections with 64 MiB live, want at least 96 MiB", debug.SetMemoryLimit(-1))
		}
		runtime.GC()
		runtime.Gosched()
	}
	runtime.KeepAlive(live)
}

// TestHoldMemory: bytes a render holds to its end raise the policy's
// limit to the floor and them, never lower it, and leave a limit the
// environment set alone. The policy is applied without its watch: a
// collection in between would raise the limit with what this process
// holds (bash .ci/run once saw 166 MiB for 121).
func TestHoldMemory(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Cleanup(policyOff)
	const floor = 1 << 20
	applyMemoryPolicy(func(string) string { return "" }, floor)
	holdMemory(120 << 20)
	if got := debug.SetMemoryLimit(-1); got != floor+120<<20 {
		t.Errorf("120 MiB held: limit %d, want %d", got, floor+120<<20)
	}
	holdMemory(10 << 20)
	if got := debug.SetMemoryLimit(-1); got != floor+120<<20 {
		t.Errorf("less held after more: limit %d, want it kept at %d", got, floor+120<<20)
	}

	debug.SetMemoryLimit(math.MaxInt64)
	applyMemoryPolicy(func(k string) string { return map[string]string{"GOMEMLIMIT": "off"}[k] }, floor)
	holdMemory(60 << 20)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("GOMEMLIMIT set: limit %d, want the environment's (unchanged here)", got)
	}
}

// policyOff ends a test's policy: the renders of later tests in this
// process must not raise a test's small limit (holdMemory).
func policyOff() {
	policy.Lock()
	policy.on = false
	policy.gen++ // ends the test's watch
	policy.Unlock()
}

// TestMemoryPolicyGrowth: under the policy, a heap whose live part grows
// to 150 MiB in spans left three-quarters free collects a few times (3
// to 4 seen), in a fresh process (hugePageChild's "growth"): the raised
// limit counts what the runtime holds, not only what is live. With 1.5
// times live it collected 28 to 117 times (the control, seen).
func TestMemoryPolicyGrowth(t *testing.T) {
	if n := runChild(t, "growth", "GOGC=", "GOMEMLIMIT="); n > 10 {
		t.Errorf("%d collections while 150 MiB became live, want 10 at most", n)
	}
}
