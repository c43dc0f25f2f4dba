package load

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wavesmith/wavesmith/generators/builtin"
)

// TestReadInputsRereads: files beyond maxHeld are dropped after reading
// and read again by Decode; a file changed in between is decoded as it is
// now and reported (Changed), as the digests Each gave are the old ones.
func TestReadInputsRereads(t *testing.T) {
	defer func(v int64) { maxHeld = v }(maxHeld)
	maxHeld = 1 // nothing held
	root := t.TempDir()
	cm := func(v string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: demo\ndata:\n  v: " + v + "\n"
	}
	file := filepath.Join(root, "cm.yaml")
	for _, tc := range []struct {
		name    string
		change  bool
		want    string
		changed bool
	}{{"unchanged", false, "one", false}, {"changed between", true, "two", true}} {
		if err := os.WriteFile(file, []byte(cm("one")), 0o644); err != nil {
			t.Fatal(err)
		}
		in, err := ReadInputs(context.Background(), root, builtin.Registry(), []string{file}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		in.Each(func(string, [32]byte, error) { n++ })
		if n != 1 || in.raw[0] != nil {
			t.Fatalf("%s: %d files, held %v: want one, dropped", tc.name, n, in.raw[0] != nil)
		}
		if tc.change {
			if err := os.WriteFile(file, []byte(cm("two")), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		objs, err := in.Decode(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		data, _ := objs[0].Map["data"].(map[string]any)
		if len(objs) != 1 || data["v"] != tc.want || in.Changed() != tc.changed {
			t.Errorf("%s: decoded %v, changed %v; want v=%s, changed %v", tc.name, data, in.Changed(), tc.want, tc.changed)
		}
	}
}

// TestChildPath: childPath joins as filepath.Join does.
func TestChildPath(t *testing.T) {
	for _, dir := range []string{".", "/", "specs", "specs/", "./specs", "a/../b", "/abs/dir", "a//b", ".."} {
		for _, name := range []string{"x.yaml", ".hidden", "..", ".", "", "a/b"} {
			if got, want := childPath(dir)(name), filepath.Join(dir, name); got != want {
				t.Errorf("childPath(%q)(%q) = %q, want %q", dir, name, got, want)
			}
		}
	}
}

// TestReadInputsSize: listed is told the number of inputs listed so far
// after each folder and once all are, before any is read; Size is every
// byte read, the files' and stdin's, whether a file is held for Decode or
// dropped (maxHeld).
func TestReadInputsSize(t *testing.T) {
	root := t.TempDir()
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
	for _, f := range []string{"a/a.yaml", "b.yaml", "c.yaml"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f), []byte(cm), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stdin := cm + "data: {}\n"
	want := int64(3*len(cm) + len(stdin))
	for _, held := range []int64{64 << 20, 1} {
		func() {
			defer func(v int64) { maxHeld = v }(maxHeld)
			maxHeld = held
			r := &readCount{r: strings.NewReader(stdin)}
			var listed []int
			in, err := ReadInputs(context.Background(), root, builtin.Registry(), []string{root, "-"}, r, func(n int) {
				if r.n != 0 {
					t.Errorf("maxHeld %d: listed(%d) after %d bytes of stdin were read", held, n, r.n)
				}
				listed = append(listed, n)
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := in.Size(); got != want {
				t.Errorf("maxHeld %d: Size() = %d, want %d", held, got, want)
			}
			// The folder a is listed first (1), then root (3, a's
			// file included), then stdin is added (4).
			if w := []int{1, 3, 4}; !slices.Equal(listed, w) {
				t.Errorf("maxHeld %d: listed %v, want %v", held, listed, w)
			}
		}()
	}
}

// readCount counts the bytes read from r.
type readCount struct {
	r io.Reader
	n int
}

func (c *readCount) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}
