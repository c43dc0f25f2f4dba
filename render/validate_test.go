package render

import (
	"context"
	"fmt"
	"hash/maphash"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/manifest"
)

// TestDuplicatesWhenHashesCollide: validateSet keeps the items by a hash
// of their key, and tells keys that share a hash apart by the key. With
// every key on one hash, a render finds the duplicates the real hash
// finds, each naming the first item of its key, and no others.
func TestDuplicatesWhenHashesCollide(t *testing.T) {
	render := func(names ...string) string {
		var objs []*manifest.Object
		for i, n := range names {
			o := manifest.New(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": n, "namespace": "ns"}})
			o.Source.File = fmt.Sprintf("f%d.yaml", i)
			objs = append(objs, o)
		}
		_, err := Render(context.Background(), objs, Options{Engines: engines.Dialects(), Root: "..", Generators: builtin.Registry()})
		if err == nil {
			return ""
		}
		return err.Error()
	}
	dups := []string{"a", "b", "a", "c", "b", "d", "a"}
	distinct := []string{"a", "b", "c", "d", "e"}
	want, none := render(dups...), render(distinct...)
	if n := strings.Count(want, "also"); n != 3 || none != "" {
		t.Fatalf("the real hash: %d duplicates (want 3), and %q for distinct keys (want none): the case tests nothing", n, none)
	}
	defer func(h func(maphash.Seed, manifest.Key) uint64) { hashKey = h }(hashKey)
	hashKey = func(maphash.Seed, manifest.Key) uint64 { return 0 }
	if diff := cmp.Diff(want, render(dups...)); diff != "" {
		t.Errorf("every key on one hash: -real hash +one hash:\n%s", diff)
	}
	if got := render(distinct...); got != "" {
		t.Errorf("distinct keys on one hash: %s", got)
	}
}
