package review

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/manifest"
)

func objects(t *testing.T, yaml string) []*manifest.Object {
	t.Helper()
	objs, err := manifest.Decode("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

const cm = `apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
  namespace: apps
  annotations: {wavesmith.io/apply-order: "%s", wavesmith.io/update-policy: %s}
data: {k: %s}
`

func configMap(name, wave, policy, value string) string {
	return fmt.Sprintf(cm, name, wave, policy, value) + "---\n"
}

func TestCompare(t *testing.T) {
	secret := func(v string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: apps}\ndata: {password: " + v + "}\n---\n"
	}
	for _, tc := range []struct {
		name       string
		base, head string
		want       []string // change and object, in report order
		lifecycle  map[string][]AnnotationChange
		counts     [3]int
		absent     []string
	}{
		{
			name: "equal",
			base: configMap("a", "0", "replace", "1"), head: configMap("a", "0", "replace", "1"),
		},
		{
			name: "lifecycle changes first, then the rest by key",
			base: configMap("a", "0", "replace", "1") + configMap("b", "0", "replace", "1") + configMap("gone", "0", "replace", "1"),
			head: configMap("a", "0", "replace", "2") + configMap("b", "4", "recreate", "1") + configMap("new", "0", "replace", "1"),
			want: []string{"changed ConfigMap/apps/b", "changed ConfigMap/apps/a", "removed ConfigMap/apps/gone", "added ConfigMap/apps/new"},
			lifecycle: map[string][]AnnotationChange{"ConfigMap/apps/b": {
				{Annotation: "wavesmith.io/apply-order", Base: "0", Head: "4"},
				{Annotation: "wavesmith.io/update-policy", Base: "replace", Head: "recreate"},
			}},
			counts: [3]int{1, 1, 2},
		},
		{
			name: "a Secret's values are masked",
			base: secret("b2xk"), head: secret("bmV3"),
			want:   []string{"changed Secret/apps/s"},
			counts: [3]int{0, 0, 1},
			absent: []string{"b2xk", "bmV3"},
		},
		{
			name: "a removed Secret is masked too",
			base: secret("b2xk"),
			want: []string{"removed Secret/apps/s"}, counts: [3]int{0, 1, 0}, absent: []string{"b2xk"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Compare(Revision{Name: "base", Objects: objects(t, tc.base)}, Revision{Name: "head", Objects: objects(t, tc.head)})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			lc := map[string][]AnnotationChange{}
			for _, e := range r.Entries {
				got = append(got, string(e.Change)+" "+e.Object)
				if e.Lifecycle != nil {
					lc[e.Object] = e.Lifecycle
				}
				for _, s := range tc.absent {
					if strings.Contains(e.Diff, s) {
						t.Errorf("%s: the diff shows %q:\n%s", e.Object, s, e.Diff)
					}
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			if tc.lifecycle == nil {
				tc.lifecycle = map[string][]AnnotationChange{}
			}
			if diff := cmp.Diff(tc.lifecycle, lc); diff != "" {
				t.Errorf("lifecycle (-want +got):\n%s", diff)
			}
			if got := [3]int{r.Added, r.Removed, r.Changed}; got != tc.counts {
				t.Errorf("added, removed, changed: got %v, want %v", got, tc.counts)
			}
			if r.Empty() != (len(tc.want) == 0) {
				t.Errorf("Empty() = %v", r.Empty())
			}
		})
	}
}

func TestCompareDuplicate(t *testing.T) {
	objs := objects(t, configMap("a", "0", "replace", "1")+configMap("a", "0", "replace", "2"))
	if _, err := Compare(Revision{Name: "base", Objects: objs}, Revision{Name: "head"}); err == nil || !strings.Contains(err.Error(), "base: ConfigMap/apps/a appears twice") {
		t.Errorf("want a duplicate error naming the revision, got %v", err)
	}
}

// TestMarkdownLimit: however many objects differ, the Markdown report
// stays within its limit and says how many it left out.
func TestMarkdownLimit(t *testing.T) {
	var base, head strings.Builder
	for i := 0; i < 400; i++ {
		name := fmt.Sprintf("cm-%03d", i)
		base.WriteString(configMap(name, "0", "replace", strings.Repeat("x", 200)))
		head.WriteString(configMap(name, "1", "replace", strings.Repeat("y", 200)))
	}
	r, err := Compare(Revision{Name: "main", Objects: objects(t, base.String())}, Revision{Name: "work tree", Objects: objects(t, head.String())})
	if err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{4000, 20000, DefaultMarkdownLimit} {
		var b bytes.Buffer
		if err := r.WriteMarkdown(&b, limit); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if b.Len() > limit {
			t.Errorf("limit %d: the report takes %d bytes", limit, b.Len())
		}
		for _, s := range []string{"### wavesmith review: `main` → `work tree`", "**0 added, 0 removed, 400 changed**", "| `ConfigMap/apps/cm-000` | changed | apply-order 0 → 1 |", "more objects whose diff does not fit here"} {
			if !strings.Contains(out, s) {
				t.Errorf("limit %d: the report lacks %q", limit, s)
			}
		}
		if strings.Count(out, "<details>") != strings.Count(out, "</details>") {
			t.Errorf("limit %d: unbalanced sections", limit)
		}
	}
}

func TestFenceFor(t *testing.T) {
	for in, want := range map[string]string{"plain": "```", "a ``` b": "````", "`````": "``````"} {
		if got := fenceFor(in); got != want {
			t.Errorf("fenceFor(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestExtractRefuses: an archive entry that would leave the folder, or a
// special file, is refused and nothing is written outside.
func TestExtractRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		hdr  tar.Header
	}{
		{"parent", tar.Header{Name: "../escape.yaml", Typeflag: tar.TypeReg, Size: 1, Mode: 0o644}},
		{"absolute", tar.Header{Name: "/tmp/escape.yaml", Typeflag: tar.TypeReg, Size: 1, Mode: 0o644}},
		{"fifo", tar.Header{Name: "fifo", Typeflag: tar.TypeFifo, Mode: 0o644}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			tw := tar.NewWriter(&b)
			if err := tw.WriteHeader(&tc.hdr); err != nil {
				t.Fatal(err)
			}
			if tc.hdr.Size > 0 {
				_, _ = tw.Write([]byte("x"))
			}
			_ = tw.Close()
			dir := t.TempDir()
			root, err := os.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			if err := extract(root, &b); err == nil {
				t.Fatalf("extracted %s", tc.hdr.Name)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("wrote %v", entries)
			}
		})
	}
}

func TestResolveRefusesOptions(t *testing.T) {
	r := &Repo{Top: t.TempDir()}
	if _, err := r.Resolve(t.Context(), "--output=/tmp/x"); !errors.Is(err, ErrRevision) {
		t.Errorf("want ErrRevision, got %v", err)
	}
}
