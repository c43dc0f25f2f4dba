// Package golden compares test output with files under testdata/. One
// switch, -update, rewrites them all: read every rewritten file before
// committing it.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files (read the result before committing it)")

// Assert fails t unless got equals the content of file; with -update it
// writes got to file first.
func Assert(t testing.TB, file string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test -update and read the result)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s: -golden +got:\n%s", file, diff)
	}
}

// JoinFiles lists a set of files (path to content) in path order, each
// under a "# file: <path>" line: one golden file for a whole tree.
func JoinFiles(files map[string][]byte) []byte {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b bytes.Buffer
	for _, p := range paths {
		b.WriteString("# file: " + p + "\n")
		b.Write(files[p])
	}
	return b.Bytes()
}
