package helm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/internal/testtool"
	"github.com/wavesmith/wavesmith/internal/tmplsandbox"
	"github.com/wavesmith/wavesmith/manifest"
)

// hostile is a Component rendering the hostile chart with one attack.
func hostile(t testing.TB, attack string) *manifest.Object {
	return spec(t, map[string]any{"source": map[string]any{"chart": map[string]any{"path": "bad-charts/hostile"}}, "values": map[string]any{"attack": attack}})
}

// TestProbeEqualsHelmEngine: the probe rehearses templates as Helm's
// engine renders them (same scoping, functions and order), so what it
// writes equals what Helm writes, on every test chart.
func TestProbeEqualsHelmEngine(t *testing.T) {
	charts, _ := filepath.Glob(filepath.Join(root, "testdata", "charts", "*"))
	caps, err := capabilities(generators.Options{KubeVersion: "v1.33.0"})
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range append(charts, filepath.Join(root, "testdata", "bad-charts", "hostile")) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			chrt, err := loader.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := chartutil.ProcessDependenciesWithMerge(chrt, map[string]any{}); err != nil {
				t.Fatal(err)
			}
			vals, err := chartutil.ToRenderValuesWithSchemaValidation(chrt, map[string]any{}, chartutil.ReleaseOptions{Name: "rel", Namespace: "apps", Revision: 1, IsInstall: true}, caps, false)
			if err != nil {
				t.Fatal(err)
			}
			p := newProbe(t.Context())
			p.keep = true
			if err := p.run(chrt, vals); err != nil {
				t.Fatal(err)
			}
			want, err := engine.Render(chrt, vals)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, p.out); diff != "" {
				t.Errorf("-Helm's engine +probe:\n%s", diff)
			}
		})
	}
}

// TestNondeterministic: templates whose kept output differs between the
// rehearsal and Helm's run are named with the functions they called and
// the first object and field that differ; calls whose result the output
// ignores, left-out hooks and NOTES.txt are not.
func TestNondeterministic(t *testing.T) {
	res, err := generate(t, map[string]any{"source": map[string]any{"chart": map[string]any{"path": "bad-charts/nondeterministic"}}})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "testdata", "bad-charts", "nondeterministic", "templates")
	var got []string
	for _, w := range res.Warnings {
		if strings.Contains(w.Message, "no GitOps engine runs") {
			continue
		}
		if w.Object != "Component.wavesmith.io/apps/rel" || w.Field != "spec.source.chart.path" {
			t.Errorf("the warning names the Component and its chart: %+v", w)
		}
		got = append(got, strings.SplitN(w.Message, ", so the output", 2)[0])
	}
	want := []string{
		// uuidv4 through include; data.id comes first, data.year (now) differs too
		filepath.Join(dir, "configmap.yaml") + " calls now, uuidv4, whose result changes on every render: a second render differs (ConfigMap/rel-id at data.id)",
		filepath.Join(dir, "secret.yaml") + " calls randAlpha, randAlphaNum, whose result changes on every render: a second render differs (Secret/rel-secret at stringData.password)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}

// TestClockOnlyChecked: a chart calling now only to check a duration
// (cilium) renders alike twice, and no warning says otherwise; a template
// writing the year does differ in the rehearsal, whose clock is moved.
func TestClockOnlyChecked(t *testing.T) {
	res, err := generate(t, map[string]any{"source": map[string]any{"chart": map[string]any{"path": "charts/clock-check"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 0 {
		t.Errorf("want no warning, got %v", res.Warnings)
	}
	// Every field of the rehearsal's clock differs from the clock's, on
	// days where calendars turn (leap days, month and year ends).
	const layout = "2006 01 02 Mon 15 04 05 .000 .000000 .000000000"
	for _, at := range []string{"2024-02-28T23:59:59.999999999Z", "2024-02-29T00:00:00Z", "2023-01-31T12:30:30.5Z", "2025-12-31T23:59:59.998998999Z", "2026-11-26T13:10:03.123456789Z"} {
		now, err := time.Parse(time.RFC3339Nano, at)
		if err != nil {
			t.Fatal(err)
		}
		ra, rb := rehearsalShift(now).Format(layout), now.Format(layout)
		a, b := strings.Fields(ra), strings.Fields(rb)
		for i := range a {
			if a[i] == b[i] {
				t.Errorf("the rehearsal clock %q agrees with the clock %q in field %d", ra, rb, i)
			}
		}
	}
}

// TestBudgets: each hostile template fails fast with ErrBudget naming the
// Component and the template, before it allocates what it asks for.
func TestBudgets(t *testing.T) {
	cases := map[string]struct {
		reason string
		file   string
		text   string
	}{
		"repeat":     {"a string of 300 MB", "repeat.yaml", "repeat would return about 300000000 bytes"},
		"until":      {"a list of 2e9 numbers", "until.yaml", "until would return about 16000000000 bytes"},
		"untilStep":  {"the same with untilStep", "untilstep.yaml", "untilStep would return about 16000000000 bytes"},
		"range":      {"nested ranges over until: 1e10 iterations", "range.yaml", "kept more than"},
		"write":      {"nested ranges writing 1e10 bytes", "write.yaml", "a template file's output of more than 2097152 bytes"},
		"accumulate": {"a list growing by 100 kB strings", "accumulate.yaml", "kept more than"},
		"files":      {"a list growing by 64 kB files", "files.yaml", "kept more than"},
		"include":    {"includes of 1 MB doubling 40 times", "include.yaml", "an include's or tpl's output of more than 1048576 bytes"},
		"keys":       {"200 key generations", "keys.yaml", "genPrivateKey: key generations and password hashes cost 51, more than the 50"},
		"loop":       {"nested ranges calling nothing: 1e12 iterations, once beyond any bound but the deadline", "loop.yaml", "more than 10000000 steps"},
	}
	// Small limits keep this quick under the race detector;
	// TestHostileMemory runs the attacks with the real ones.
	defer func(saved tmplsandbox.Limits) { tmplsandbox.Default = saved }(tmplsandbox.Default)
	tmplsandbox.Default.Value, tmplsandbox.Default.Output, tmplsandbox.Default.TotalOutput, tmplsandbox.Default.Work = 1<<20, 2<<20, 2<<20, 16<<20
	for attack, tc := range cases {
		t.Run(attack, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			start := time.Now()
			_, err := Generator{}.Generate(ctx, hostile(t, attack), generators.Options{Root: root})
			t.Logf("%s: %v after %v", attack, err, time.Since(start))
			if !errors.Is(err, ErrBudget) || errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("%s: want ErrBudget before the deadline, got %v", tc.reason, err)
			}
			var me *manifest.Error
			if !errors.As(err, &me) || me.Object != "Component.wavesmith.io/apps/rel" || me.Field != "spec.source.chart.path" {
				t.Errorf("%s: the error names the Component and its chart: %#v", tc.reason, err)
			}
			for _, s := range []string{"hostile/templates/" + tc.file, tc.text} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%s: %q lacks %q", tc.reason, err, s)
				}
			}
		})
	}
}

// TestDeadline: a template that only takes time stops at the context's
// deadline with an error naming it, and the rehearsal ends too.
func TestDeadline(t *testing.T) {
	// Steps beyond reach: the deadline, not the step limit, ends spin.
	defer func(saved tmplsandbox.Limits) { tmplsandbox.Default = saved }(tmplsandbox.Default)
	tmplsandbox.Default.Steps = math.MaxInt64
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := Generator{}.Generate(ctx, hostile(t, "spin"), generators.Options{Root: root})
	if !errors.Is(err, ErrBudget) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want ErrBudget and the deadline, got %v", err)
	}
	if !strings.Contains(err.Error(), "while rendering hostile/templates/spin.yaml") {
		t.Errorf("the error names the template: %v", err)
	}
	// The probe stops at its next function call: its goroutine ends.
	for deadline := time.Now().Add(time.Minute); runtime.NumGoroutine() > before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines left, %d before", runtime.NumGoroutine(), before)
		}
	}

	// A context that has ended before rendering starts.
	_, err = Generator{}.Generate(ctx, chartSpec(t, "webapp"), generators.Options{Root: root})
	if !errors.Is(err, ErrBudget) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("want ErrBudget and the deadline, got %v", err)
	}
}

// TestHostileMemory runs each attack in a process of its own that exits
// after the error, as the CLI does, built without the race detector, and
// measures its peak memory: with the CLI's default timeout of a minute for
// the attacks the budget stops, with a short one for those only the
// deadline may stop (spin and loop take time; the sandbox's step limit
// may end them first).
func TestHostileMemory(t *testing.T) {
	const limit = 512 << 20
	testtool.Inputs(t) // the helper's source is under testdata/
	bin := filepath.Join(t.TempDir(), "hostile")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/hostile").CombinedOutput(); err != nil {
		t.Fatalf("building the helper: %v\n%s", err, out)
	}
	timeouts := map[string]string{"spin": "3s", "loop": "3s"}
	for _, attack := range []string{"none", "repeat", "until", "untilStep", "range", "write", "accumulate", "files", "include", "spin", "loop"} {
		t.Run(attack, func(t *testing.T) {
			timeout := timeouts[attack]
			if timeout == "" {
				timeout = "1m"
			}
			cmd := exec.Command(bin, "-root", root, "-attack", attack, "-timeout", timeout)
			start := time.Now()
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			msg, hwm, ok := strings.Cut(strings.TrimSpace(string(out)), "\nVmHWM: ")
			kib, err := strconv.ParseInt(strings.TrimSuffix(hwm, " kB"), 10, 64)
			if !ok || err != nil {
				t.Fatalf("no peak memory in %q", out)
			}
			rss := kib << 10
			t.Logf("%-10s peak RSS %4d MiB after %v: %s", attack, rss>>20, time.Since(start).Round(time.Millisecond), msg)
			if attack == "none" {
				if msg != "<nil>" {
					t.Errorf("the chart renders without an attack: %s", out)
				}
				return
			}
			if !strings.Contains(msg, ErrBudget.Error()) {
				t.Errorf("want %v, got %s", ErrBudget, out)
			}
			if rss > limit {
				t.Errorf("peak RSS %d MiB, want under %d MiB", rss>>20, limit>>20)
			}
		})
	}
}

// TestConcurrentRenders renders charts on many goroutines at once (run
// under -race): nothing is shared between renders, and the output does
// not change.
func TestConcurrentRenders(t *testing.T) {
	names := []string{"webapp", "deps", "operator", "umbrella", "blocks"}
	first := map[string]map[string]any{}
	for _, n := range names {
		res, err := generate(t, map[string]any{"source": map[string]any{"chart": map[string]any{"path": "charts/" + n}}})
		if err != nil {
			t.Fatal(err)
		}
		first[n] = withoutAdditions(res.Objects)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*len(names))
	for i := 0; i < 4; i++ {
		for _, n := range names {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := generate(t, map[string]any{"source": map[string]any{"chart": map[string]any{"path": "charts/" + n}}})
				if err == nil && !cmp.Equal(first[n], withoutAdditions(res.Objects)) {
					err = fmt.Errorf("%s renders differently: %s", n, cmp.Diff(first[n], withoutAdditions(res.Objects)))
				}
				errs <- err
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}
