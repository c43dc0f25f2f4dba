package review

import (
	"bytes"
	"fmt"
	"path"
	"sort"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/internal/livediff"
	"github.com/wavesmith/wavesmith/internal/outtree"
	"github.com/wavesmith/wavesmith/internal/textdiff"
	"github.com/wavesmith/wavesmith/manifest"
)

// Change says what happened to an object between the two revisions.
type Change string

// The changes, in the order a report lists them.
const (
	Added   Change = "added"
	Removed Change = "removed"
	Changed Change = "changed"
)

// Lifecycle lists the annotations whose change a report summarises first:
// what decides when and how an engine applies, replaces, prunes or runs
// an object. The native annotations carry the resolved value on every
// rendered object, so they alone tell every engine's change.
var Lifecycle = []string{
	inventory.ApplyOrder, inventory.Hook, inventory.DeleteOrder, inventory.PurgeOrder,
	inventory.AdoptionPolicy, inventory.ReconcilePolicy, inventory.UpdatePolicy, inventory.DeletePolicy,
}

// Revision is one side of a review: the objects a render gave at a
// revision.
type Revision struct {
	// Name is how reports name the revision: "main", "HEAD~1", "work tree".
	Name string
	// Objects is the render's stream, decoded; nil for a revision where
	// the inputs do not exist.
	Objects []*manifest.Object
}

// Entry is one object that differs.
type Entry struct {
	// Object is Kind[.group]/namespace/name.
	Object string `json:"object"`
	Change Change `json:"change"`
	// Lifecycle holds, for a changed object, the lifecycle annotations
	// whose value changed: their base and head values ("" for absent).
	Lifecycle []AnnotationChange `json:"lifecycle,omitempty"`
	// Diff is the unified diff of the object's YAML, base to head, with
	// Secret values masked.
	Diff string `json:"diff"`
}

// AnnotationChange is one lifecycle annotation of an object, before and
// after.
type AnnotationChange struct {
	Annotation string `json:"annotation"`
	Base       string `json:"base"`
	Head       string `json:"head"`
}

// Report is the difference between two renders.
type Report struct {
	Base    string  `json:"base"`
	Head    string  `json:"head"`
	Added   int     `json:"added"`
	Removed int     `json:"removed"`
	Changed int     `json:"changed"`
	Entries []Entry `json:"entries"`
}

// Empty reports whether the two renders are equal.
func (r *Report) Empty() bool { return len(r.Entries) == 0 }

// Compare returns the difference between base and head, object by object:
// the entries with lifecycle changes first, then the rest, each group in
// the order of the objects' keys. Secret values never appear: they are
// masked as wavesmith diff masks them, a changed value marked as changed.
func Compare(base, head Revision) (*Report, error) {
	b, err := index(base)
	if err != nil {
		return nil, err
	}
	h, err := index(head)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(b)+len(h))
	for k := range b {
		keys = append(keys, k)
	}
	for k := range h {
		if _, ok := b[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	r := &Report{Base: base.Name, Head: head.Name}
	var first, rest []Entry
	for _, k := range keys {
		bo, ho := b[k], h[k]
		e := Entry{Object: k}
		var bm, hm map[string]any
		switch {
		case bo == nil:
			e.Change, r.Added = Added, r.Added+1
			hm = manifest.DeepCopyValue(ho.Map).(map[string]any)
		case ho == nil:
			e.Change, r.Removed = Removed, r.Removed+1
			bm = manifest.DeepCopyValue(bo.Map).(map[string]any)
		default:
			bm = manifest.DeepCopyValue(bo.Map).(map[string]any)
			hm = manifest.DeepCopyValue(ho.Map).(map[string]any)
		}
		e.Lifecycle = lifecycleChanges(bm, hm)
		livediff.MaskSecret(bm, hm)
		if bm != nil && hm == nil {
			livediff.MaskSecret(nil, bm)
		}
		bt, ht := encode(bm), encode(hm)
		if bt == ht {
			continue
		}
		if e.Change == "" {
			e.Change, r.Changed = Changed, r.Changed+1
		}
		nameA, nameB := k+" ("+base.Name+")", k+" ("+head.Name+")"
		if bm == nil {
			nameA = "/dev/null"
		}
		if hm == nil {
			nameB = "/dev/null"
		}
		e.Diff = textdiff.UnifiedDiff(nameA, nameB, bt, ht)
		if len(e.Lifecycle) > 0 {
			first = append(first, e)
		} else {
			rest = append(rest, e)
		}
	}
	r.Entries = append(first, rest...)
	if r.Entries == nil {
		r.Entries = []Entry{}
	}
	return r, nil
}

// index keys a revision's objects by Kind[.group]/namespace/name; the
// same object twice is an error naming the revision (a render never
// emits it: the stream was not wavesmith's).
func index(rev Revision) (map[string]*manifest.Object, error) {
	m := make(map[string]*manifest.Object, len(rev.Objects))
	for _, o := range rev.Objects {
		k := o.Key().String()
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("%s: %s appears twice in the render", rev.Name, k)
		}
		m[k] = o
	}
	return m, nil
}

func annotations(obj map[string]any) map[string]any {
	md, _ := obj["metadata"].(map[string]any)
	a, _ := md["annotations"].(map[string]any)
	return a
}

// lifecycleChanges lists the lifecycle annotations whose value differs
// between base and head; nil for an added or removed object, whose
// addition or removal says it all.
func lifecycleChanges(base, head map[string]any) []AnnotationChange {
	if base == nil || head == nil {
		return nil
	}
	ba, ha := annotations(base), annotations(head)
	var out []AnnotationChange
	for _, name := range Lifecycle {
		bv, _ := ba[name].(string)
		hv, _ := ha[name].(string)
		if bv != hv {
			out = append(out, AnnotationChange{Annotation: name, Base: bv, Head: hv})
		}
	}
	return out
}

func encode(m map[string]any) string {
	if m == nil {
		return ""
	}
	var buf bytes.Buffer
	manifest.Encode(&buf, m)
	return buf.String()
}

// TreeObjects reads the objects of a GitOps tree written by wavesmith
// render -o DIR: every YAML file but the kustomization files that list
// them and the tree's record. Flux Kustomizations and Argo CD
// Applications of the tree are objects too: a review shows their changes.
func TreeObjects(dir string) ([]*manifest.Object, error) {
	files, err := outtree.Read(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		if base := path.Base(name); base == "kustomization.yaml" || base == outtree.RecordFile {
			continue
		}
		names = append(names, name)
	}
	sort.Strings(names)
	var objs []*manifest.Object
	for _, name := range names {
		o, err := manifest.Decode(name, files[name])
		if err != nil {
			return nil, err
		}
		objs = append(objs, o...)
	}
	return objs, nil
}
