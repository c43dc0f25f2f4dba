package syncwaves

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/gitops-engine/pkg/health"
	"github.com/argoproj/gitops-engine/pkg/sync/common"
	"github.com/argoproj/gitops-engine/pkg/utils/kube"
)

// TestExamplesOldPlacementDeadlocks is the control of TestExamplesConverge:
// the same production order with each spec's sync-wave annotation moved
// back to the wave its source declares, where render placed specs before
// they moved to the wave of their last child. A spec whose children come
// in a later step is Progressing (wavesmith-status: its children are not
// found) and gitops-engine waits for its health before that step: the
// sync never converges. The test runs the sync until that state is in
// place and holds (deadlockHold, deadlockIterations), and asserts why: the
// operation waits for exactly the stuck specs, each Progressing and naming
// its missing children, none of which was created.
func TestExamplesOldPlacementDeadlocks(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(repoRoot(t), "testdata", "examples")
	objs := renderObjects(t, dir)
	moved := oldPlacement(t, objs, dir)
	targets := classify(t, objs)
	bubbleDependencies(t, targets)
	all := byKey(targets)

	// The specs the old placement applies before children wavesmith-status
	// waits for, in the first step that has any.
	var stuckStep step
	stuck := map[kube.ResourceKey][]*target{}
	for _, s := range targets {
		if !s.isSpec() {
			continue
		}
		late := lateChildren(t, s, all)
		if len(late) == 0 {
			continue
		}
		if len(stuck) == 0 || s.steps[0].before(stuckStep) {
			stuckStep, stuck = s.steps[0], map[kube.ResourceKey][]*target{}
		}
		if s.steps[0] == stuckStep {
			stuck[s.key] = late
		}
	}
	if len(stuck) == 0 {
		t.Fatalf("the old placement (%d specs moved) applies no spec before its children: nothing to control", moved)
	}
	var want []step
	for _, s := range expectedSteps(targets) {
		if !stuckStep.before(s) {
			want = append(want, s)
		}
	}
	t.Logf("old placement: %d specs moved; stuck in %s: %v", moved, stuckStep, keys(stuck))

	ctx, cancel := context.WithTimeout(context.Background(), convergeTimeout)
	defer cancel()
	r := startRun(ctx, t, targets)
	var (
		since     time.Time
		sinceIter int
		last      string
	)
	start := time.Now()
	st, err := r.app.sync(ctx, t, func(st syncState) bool {
		if last = r.deadlock(st, stuck); last != "" {
			since = time.Time{}
			return false
		}
		if since.IsZero() {
			since, sinceIter = time.Now(), st.iterations
			t.Logf("deadlock in place after %s (iteration %d): %s", time.Since(start).Round(time.Millisecond), st.iterations, st.message)
		}
		return time.Since(since) >= deadlockHold && st.iterations-sinceIter >= deadlockIterations
	})
	if st.phase.Completed() {
		logResults(t, st)
		t.Fatalf("control: the sync %s with the old placement: %s; it should never end", st.phase, st.message)
	}
	if err != nil {
		logResults(t, st)
		t.Fatalf("control: the deadlock was not in place after %s (%d iterations): %s", convergeTimeout, st.iterations, last)
	}
	t.Logf("control: still %s after %d iterations, %s after the deadlock set in", st.phase, st.iterations-sinceIter, time.Since(since).Round(time.Millisecond))

	// The wave hook never got past the stuck step.
	var got []step
	for _, h := range r.app.hookCalls() {
		got = append(got, h.step)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the wave hook saw %v; want the steps up to the stuck one: %v", got, want)
	}
	// Nothing of a later step exists; the stuck specs are not Ready.
	for _, tg := range targets {
		if _, ok := r.app.obs.get(r.app.obs.created, tg.key); ok && stuckStep.before(tg.steps[0]) {
			t.Errorf("%s (%s) was created, after the stuck step %s", tg.key, tg.steps[0], stuckStep)
		}
	}
	var why []string
	for _, k := range keys(stuck) {
		live := r.live(ctx, t, k)
		if c := condition(live, "Ready"); c == "True" {
			t.Errorf("%s is Ready with children missing", k)
		}
		h, _ := r.app.obs.healthOf(k)
		why = append(why, fmt.Sprintf("%s %s: %s", specID(k), h.Status, h.Message))
	}
	t.Logf("control: the sync is %s: %q; %s", st.phase, st.message, strings.Join(why, "; "))
}

// deadlock returns "" when st shows the deadlock: the operation runs and
// waits for the health of exactly the stuck specs (every other object of
// their step is healthy), each of which Argo CD's Lua check calls
// Progressing from a status wavesmith-status wrote for its generation,
// naming every late child as not found, none of which was created. Else
// it says what differs.
func (r *run) deadlock(st syncState, stuck map[kube.ResourceKey][]*target) string {
	if st.phase != common.OperationRunning {
		return fmt.Sprintf("operation %s: %s", st.phase, st.message)
	}
	var waiting []kube.ResourceKey
	for _, res := range st.results {
		if res.HookType == "" && res.HookPhase == common.OperationRunning {
			waiting = append(waiting, res.ResourceKey)
		}
	}
	sort.Slice(waiting, func(i, j int) bool { return waiting[i].String() < waiting[j].String() })
	if want := keys(stuck); fmt.Sprint(waiting) != fmt.Sprint(want) {
		return fmt.Sprintf("the operation waits for %v (%s), not for the stuck specs %v", waiting, st.message, want)
	}
	first := waiting[0]
	msg := fmt.Sprintf("waiting for healthy state of %s/%s/%s", first.Group, first.Kind, first.Name)
	if n := len(waiting) - 1; n > 0 {
		msg += fmt.Sprintf(" and %d more resources", n)
	}
	if st.message != msg {
		return fmt.Sprintf("operation message %q, want %q", st.message, msg)
	}
	for k, late := range stuck {
		h, ok := r.app.obs.healthOf(k)
		if !ok || h.Status != health.HealthStatusProgressing || strings.HasPrefix(h.Message, "waiting for wavesmith-status") {
			return fmt.Sprintf("%s: health %+v; want Progressing as wavesmith-status reports it", k, h)
		}
		for _, c := range late {
			if !strings.Contains(h.Message, fmt.Sprintf("%s %s/%s: notfound", c.key.Kind, c.key.Namespace, c.key.Name)) {
				return fmt.Sprintf("%s: health message %q does not name its missing child %s", k, h.Message, c.key)
			}
			if _, ok := r.app.obs.get(r.app.obs.created, c.key); ok {
				return fmt.Sprintf("%s: child %s (%s) was created", k, c.key, c.steps[0])
			}
		}
	}
	return ""
}

func keys(m map[kube.ResourceKey][]*target) []kube.ResourceKey {
	var out []kube.ResourceKey
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}
