package parity

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

var outDir = flag.String("out", "", "write each variation's normalised outputs and differences under this folder")

// summary collects the outcome of every variation for the closing log.
type summary struct {
	mu             sync.Mutex
	passed, failed []string
	cases          map[string]bool
}

func (s *summary) add(caseName, id string, failed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cases[caseName] = true
	if failed {
		s.failed = append(s.failed, id)
	} else {
		s.passed = append(s.passed, id)
	}
}

// TestParity renders every variation of every case with wavesmith and
// with the reference tool and compares the outputs object for object,
// field for field, after the normalisations of normalize_test.go.
func TestParity(t *testing.T) {
	start := time.Now()
	c := loadCorpus(t)
	tl := lookTools(t)
	dl := time.Now()
	mods := fetchModules(t, c)
	var zipBytes int64
	for _, m := range mods {
		if fi, err := os.Stat(m.Zip); err == nil {
			zipBytes += fi.Size()
		}
	}
	t.Logf("corpus: %d modules, %.1f MB of module zips, fetched or found in %v", len(mods), float64(zipBytes)/1e6, time.Since(dl).Round(time.Millisecond))
	checkHelmDefaults(t, tl.helm, mods[helmModule].Dir)

	sum := summary{cases: map[string]bool{}}
	t.Cleanup(func() {
		sort.Strings(sum.failed)
		t.Logf("parity: %d cases, %d variations: %d passed, %d failed, wall time %v", len(sum.cases), len(sum.passed)+len(sum.failed), len(sum.passed), len(sum.failed), time.Since(start).Round(time.Millisecond))
		for _, id := range sum.failed {
			t.Logf("  FAIL %s", id)
		}
	})
	for _, cs := range c.Cases {
		modDir := mods[cs.Module].Dir
		if fi, err := os.Stat(filepath.Join(modDir, filepath.FromSlash(cs.Dir))); err != nil || !fi.IsDir() {
			t.Errorf("%s: %s has no folder %s", cs.Name, cs.Module, cs.Dir)
			continue
		}
		for _, v := range cs.variations() {
			id := cs.Name + "/" + v.Name
			t.Run(id, func(t *testing.T) {
				t.Parallel()
				t0 := time.Now()
				defer func() {
					t.Logf("%s in %v", id, time.Since(t0).Round(time.Millisecond))
					sum.add(cs.Name, id, t.Failed())
				}()
				checkVariation(t, tl, modDir, cs, v)
			})
			if !v.Served {
				continue
			}
			for _, src := range []string{"repository", "oci"} {
				t.Run(id+"/"+src, func(t *testing.T) {
					t.Parallel()
					t0 := time.Now()
					defer func() {
						t.Logf("%s/%s in %v", id, src, time.Since(t0).Round(time.Millisecond))
						sum.add(cs.Name, id+"/"+src, t.Failed())
					}()
					checkServed(t, tl, modDir, cs, v, src)
				})
			}
		}
	}
}

func checkVariation(t *testing.T, tl tools, modDir string, cs caseSpec, v variation) {
	id := cs.Name + "/" + v.Name
	r := newRepo(t, modDir, cs, v)
	toolName := map[string]string{"chart": "helm template", "kustomization": "kustomize build"}[cs.Kind]
	toolOut, toolErr := tl.renderTool(t, r, cs, v)
	wsOut, wsStderr, wsErr := tl.renderWavesmith(t, r, v)
	rerender := func() ([]byte, error) {
		out, _, err := tl.renderWavesmith(t, r, v)
		return out, err
	}
	compareOutputs(t, id, toolName, cs, v, toolOut, toolErr, wsOut, wsStderr, wsErr, rerender)
}

// compareOutputs checks wavesmith's output against the tool's, after the
// normalisations; rerender renders the variation with wavesmith again
// (random-values).
func compareOutputs(t *testing.T, id, toolName string, cs caseSpec, v variation, toolOut []byte, toolErr error, wsOut []byte, wsStderr string, wsErr error, rerender func() ([]byte, error)) {
	t.Helper()
	allow, allowed := allowList[id]

	switch {
	case v.ToolFails && toolErr == nil:
		t.Fatalf("the corpus marks this variation toolFails, but %s renders it", toolName)
	case !v.ToolFails && toolErr != nil:
		t.Fatalf("the reference tool fails (fix the corpus, or mark a negative case toolFails): %v", toolErr)
	case toolErr != nil:
		if wsErr == nil {
			t.Errorf("%s refuses this variation, wavesmith renders it:\n%v", toolName, toolErr)
		}
		return
	case allowed:
		switch {
		case wsErr == nil:
			t.Errorf("the allow-list expects wavesmith to refuse this variation (%s), but it renders it: remove the entry", allow.reason)
		case !strings.Contains(wsErr.Error(), allow.wavesmithError):
			t.Errorf("wavesmith refuses this variation, but not with the allow-listed error %q (%s):\n%v", allow.wavesmithError, allow.reason, wsErr)
		}
		return
	}

	toolObjs, err := decodeStream(toolOut)
	if err != nil {
		t.Fatalf("decoding the output of %s: %v", toolName, err)
	}
	want, dups, err := normaliseTool(toolObjs, cs.Kind, v.namespace())
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case len(dups) > 0 && wsErr != nil && strings.Contains(wsErr.Error(), "duplicate object"):
		// README: duplicates are refused; the tool prints them.
		t.Logf("%s prints objects twice (%s); wavesmith refuses them, by design: %v", toolName, strings.Join(dups, ", "), wsErr)
		return
	case len(dups) > 0:
		t.Fatalf("%s prints objects twice (%s): wavesmith should refuse them as duplicates (README), but: %v", toolName, strings.Join(dups, ", "), wsErr)
	case wsErr != nil:
		t.Fatalf("%s renders this variation, wavesmith fails:\n%v", toolName, wsErr)
	}
	wsObjs, err := decodeStream(wsOut)
	if err != nil {
		t.Fatalf("decoding the output of wavesmith: %v", err)
	}
	got := normaliseWavesmith(wsObjs, want, componentKey(v))
	if v.Random {
		// The Helm SDK draws random values from crypto/rand and takes no
		// other functions: no renderer can give the same bytes twice.
		// docs/component.md (Charts): wavesmith names the template and the function.
		again, err := rerender()
		if err != nil {
			t.Fatalf("rendering again: %v", err)
		}
		if bytes.Equal(wsOut, again) {
			t.Errorf("the corpus marks this variation random, but wavesmith renders the same bytes twice: remove random")
		}
		if !strings.Contains(wsStderr, "whose result changes on every render") {
			t.Errorf("a chart drawing random values renders without the warning that names the template and function (docs/component.md, Charts):\n%s", wsStderr)
		}
		want, got = keysOnly(want), keysOnly(got)
	}
	report := compare(want, got)
	t.Logf("%d objects from %s, %d from wavesmith", len(want), toolName, len(got))
	if *outDir != "" {
		writeOutputs(t, id, want, got, report)
	}
	if report != "" {
		t.Errorf("wavesmith differs from %s (- %s, + wavesmith), after the normalisations of normalize_test.go:\n%s\nwavesmith's warnings:\n%s", toolName, toolName, report, strings.TrimSpace(wsStderr))
	}
}

// keysOnly keeps the keys of objs (random-values).
func keysOnly(objs map[string]obj) map[string]obj {
	out := make(map[string]obj, len(objs))
	for k := range objs {
		out[k] = obj{}
	}
	return out
}

// compare reports the objects only one side has and the differences of
// the objects both have; empty means equal.
func compare(want, got map[string]obj) string {
	var b strings.Builder
	for _, k := range sortedKeys(want) {
		if _, ok := got[k]; !ok {
			fmt.Fprintf(&b, "missing from wavesmith: %s\n", k)
		}
	}
	for _, k := range sortedKeys(got) {
		if _, ok := want[k]; !ok {
			fmt.Fprintf(&b, "only in wavesmith: %s\n", k)
		}
	}
	for _, k := range sortedKeys(want) {
		g, ok := got[k]
		if !ok {
			continue
		}
		if d := cmp.Diff(want[k], g); d != "" {
			var fields []string
			fieldDiffs(want[k], g, "", &fields)
			if len(fields) > 30 {
				fields = append(fields[:30], fmt.Sprintf("... %d more", len(fields)-30))
			}
			fmt.Fprintf(&b, "%s:\n  %s\n%s", k, strings.Join(fields, "\n  "), truncate(d, 40))
		}
	}
	return b.String()
}

// fieldDiffs lists the paths at which want and got differ, each with a
// short form of both values, for a reader who needs the gist.
func fieldDiffs(want, got any, path string, out *[]string) {
	switch w := want.(type) {
	case obj:
		g, ok := got.(obj)
		if !ok {
			*out = append(*out, path+": "+describe(want, got))
			return
		}
		keys := map[string]bool{}
		for k := range w {
			keys[k] = true
		}
		for k := range g {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			child := strings.TrimPrefix(path+"."+k, ".")
			wv, wok := w[k]
			gv, gok := g[k]
			switch {
			case !wok:
				*out = append(*out, fmt.Sprintf("%s: only wavesmith has it: %s", child, short(gv)))
			case !gok:
				*out = append(*out, fmt.Sprintf("%s: wavesmith lacks it: %s", child, short(wv)))
			default:
				fieldDiffs(wv, gv, child, out)
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok {
			*out = append(*out, path+": "+describe(want, got))
			return
		}
		if len(g) != len(w) {
			*out = append(*out, fmt.Sprintf("%s: %d items, wavesmith %d", path, len(w), len(g)))
		}
		for i := 0; i < len(w) && i < len(g); i++ {
			fieldDiffs(w[i], g[i], fmt.Sprintf("%s[%d]", path, i), out)
		}
	default:
		if !cmp.Equal(want, got) {
			*out = append(*out, path+": "+describe(want, got))
		}
	}
}

// describe shows two differing values briefly: two strings around their
// first difference, anything else in JSON.
func describe(want, got any) string {
	ws, wok := want.(string)
	gs, gok := got.(string)
	if !wok || !gok {
		return fmt.Sprintf("%s, wavesmith %s", short(want), short(got))
	}
	i := 0
	for i < len(ws) && i < len(gs) && ws[i] == gs[i] {
		i++
	}
	from := max(0, i-24)
	cut := func(s string) string {
		to := min(len(s), i+24)
		q := fmt.Sprintf("%q", s[from:to])
		if from > 0 {
			q = "…" + q
		}
		if to < len(s) {
			q += "…"
		}
		return q
	}
	return fmt.Sprintf("%s, wavesmith %s (first difference at byte %d)", cut(ws), cut(gs), i)
}

func short(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	if len(data) > 100 {
		return string(data[:100]) + "…"
	}
	return string(data)
}

func truncate(s string, lines int) string {
	ls := strings.SplitAfter(s, "\n")
	if len(ls) <= lines {
		return s
	}
	return strings.Join(ls[:lines], "") + fmt.Sprintf("\t... %d more lines (run with -out DIR for the whole difference)\n", len(ls)-lines)
}

func writeOutputs(t *testing.T, id string, want, got map[string]obj, report string) {
	dir := filepath.Join(*outDir, filepath.FromSlash(id))
	for name, objs := range map[string]map[string]obj{"tool.yaml": want, "wavesmith.yaml": got} {
		data, err := yaml.Marshal(objs)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, name), string(data))
	}
	writeFile(t, filepath.Join(dir, "diff.txt"), report)
	var full strings.Builder
	for _, k := range sortedKeys(want) {
		if g, ok := got[k]; ok {
			if d := cmp.Diff(want[k], g); d != "" {
				fmt.Fprintf(&full, "%s:\n%s", k, d)
			}
		}
	}
	writeFile(t, filepath.Join(dir, "diff-full.txt"), full.String())
}
