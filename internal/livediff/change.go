package livediff

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/gitops/argocd"
	"github.com/wavesmith/wavesmith/gitops/flux"
	"github.com/wavesmith/wavesmith/internal/textdiff"
	"github.com/wavesmith/wavesmith/manifest"
)

// immutableFields returns the fields an Invalid error says are immutable.
func immutableFields(err error) []string {
	if !apierrors.IsInvalid(err) {
		return nil
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return nil
	}
	var fields []string
	for _, c := range status.Status().Details.Causes {
		if strings.HasSuffix(c.Message, validation.FieldImmutableErrorMsg) {
			fields = append(fields, c.Field)
		}
	}
	return fields
}

// recreates reports whether the object's annotations let its applier
// delete and re-create it when an update in place is refused:
// wavesmith.io/update-policy recreate, Argo CD's Force=true sync option,
// Flux's force: enabled.
func recreates(ann map[string]string) bool {
	if ann[inventory.UpdatePolicy] == inventory.UpdateRecreate || strings.EqualFold(ann[flux.ForceAnnotation], "enabled") {
		return true
	}
	return hasSyncOption(ann, "Force=true")
}

func hasSyncOption(ann map[string]string, opt string) bool {
	for _, o := range strings.Split(ann[argocd.SyncOptions], ",") {
		if strings.TrimSpace(o) == opt {
			return true
		}
	}
	return false
}

// replaced is an object the server refused to update in place: its diff
// is the live object with the rendered fields laid over it (the server
// cannot dry-run a delete and create). Without a recreate policy it is
// also an error: the apply would fail.
func (d *differ) replaced(key manifest.Key, u, live *unstructured.Unstructured, fields []string) (*Change, error) {
	sort.Strings(fields)
	after := overlay(Clean(live.Object), u.Object)
	why := "immutable " + strings.Join(fields, ", ") + " changed"
	ch, err := change(key, Replace, why, live.Object, after)
	if err != nil || ch == nil {
		return ch, err
	}
	if !recreates(u.GetAnnotations()) {
		return ch, mark(ErrImmutable, fmt.Errorf("%s: %s: %s: applying in place would fail; %s: %s deletes and re-creates it", key, strings.Join(fields, ", "), validation.FieldImmutableErrorMsg, inventory.UpdatePolicy, inventory.UpdateRecreate))
	}
	return ch, nil
}

// overlay returns base with over laid on it: maps merge key by key, lists
// of named maps merge by name, lists of maps of the same length by index,
// anything else is over's.
func overlay(base, over map[string]any) map[string]any {
	out := deepCopy(base)
	for k, v := range over {
		out[k] = overlayValue(out[k], v)
	}
	return out
}

func overlayValue(base, over any) any {
	switch o := over.(type) {
	case map[string]any:
		if b, ok := base.(map[string]any); ok {
			return overlay(b, o)
		}
	case []any:
		b, ok := base.([]any)
		if !ok {
			break
		}
		if byName, ok := namedItems(b); ok {
			if _, ok := namedItems(o); ok {
				out := make([]any, len(o))
				for i, item := range o {
					m := item.(map[string]any)
					if prev, ok := byName[m["name"].(string)]; ok {
						out[i] = overlay(prev, m)
					} else {
						out[i] = manifest.DeepCopyValue(m)
					}
				}
				return out
			}
		}
		if len(b) == len(o) {
			out := make([]any, len(o))
			for i := range o {
				out[i] = overlayValue(b[i], o[i])
			}
			return out
		}
	}
	return manifest.DeepCopyValue(over)
}

// namedItems indexes a list whose items are all maps with a string name.
func namedItems(l []any) (map[string]map[string]any, bool) {
	out := map[string]map[string]any{}
	for _, item := range l {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, false
		}
		name, ok := m["name"].(string)
		if !ok {
			return nil, false
		}
		out[name] = m
	}
	return out, len(l) > 0
}

// created is the change of an object the server could not dry-run: the
// rendered object, new.
func created(key manifest.Key, u *unstructured.Unstructured, why string) (*Change, error) {
	return change(key, Create, why, nil, u.Object)
}

// change diffs before (nil for a new object) with after, both cleaned and
// masked; nil when they are equal.
func change(key manifest.Key, action Action, unchecked string, before, after map[string]any) (*Change, error) {
	after = Clean(after)
	var a string
	if before != nil {
		before = Clean(before)
		MaskSecret(before, after)
		b, err := yaml.Marshal(before)
		if err != nil {
			return nil, fmt.Errorf("%s: encoding the live object: %w", key, err)
		}
		a = string(b)
	} else {
		MaskSecret(nil, after)
	}
	b, err := yaml.Marshal(after)
	if err != nil {
		return nil, fmt.Errorf("%s: encoding the applied object: %w", key, err)
	}
	from, to := key.String()+" (live)", key.String()+" (after apply)"
	switch {
	case action == Replace:
		to = key.String() + " (after replace; not checked by the API server: " + unchecked + ")"
	case before == nil:
		from, to = "/dev/null", key.String()+" (new)"
		if unchecked != "" {
			to = key.String() + " (new; not checked by the API server: " + unchecked + ")"
		}
	}
	diff := textdiff.UnifiedDiff(from, to, a, string(b))
	if diff == "" {
		return nil, nil
	}
	return &Change{Key: key, Action: action, Unchecked: unchecked, Diff: diff}, nil
}

// lastApplied is kubectl's client-side apply record: a copy of the object
// (Secret values included) that is noise in a diff.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// Clean returns a copy of obj without what the server maintains and a
// reader does not need: managedFields, resourceVersion, generation, uid,
// creationTimestamp, status and kubectl's last-applied annotation.
func Clean(obj map[string]any) map[string]any {
	obj = deepCopy(obj)
	delete(obj, "status")
	md, _ := obj["metadata"].(map[string]any)
	if md == nil {
		return obj
	}
	for _, f := range []string{"managedFields", "resourceVersion", "generation", "uid", "creationTimestamp", "selfLink"} {
		delete(md, f)
	}
	if ann, ok := md["annotations"].(map[string]any); ok {
		delete(ann, lastApplied)
		if len(ann) == 0 {
			delete(md, "annotations")
		}
	}
	return obj
}

func deepCopy(obj map[string]any) map[string]any {
	return manifest.DeepCopyValue(obj).(map[string]any)
}

// MaskSecret replaces, in place, the values of a core Secret's data and
// stringData: with Sensitive, or on after with SensitiveChanged where the
// value differs from before's (before may be nil: a new Secret). Other
// objects are left alone.
func MaskSecret(before, after map[string]any) {
	if !isSecret(after) || before != nil && !isSecret(before) {
		return
	}
	for _, field := range []string{"data", "stringData"} {
		a, _ := after[field].(map[string]any)
		var b map[string]any
		if before != nil {
			b, _ = before[field].(map[string]any)
		}
		for k, v := range a {
			if old, ok := b[k]; ok && !equalValue(old, v) {
				a[k] = SensitiveChanged
			} else {
				a[k] = Sensitive
			}
		}
		for k := range b {
			b[k] = Sensitive
		}
	}
}

func isSecret(obj map[string]any) bool {
	return obj["kind"] == "Secret" && obj["apiVersion"] == "v1"
}

func equalValue(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return errors.Join(err1, err2) == nil && string(ja) == string(jb)
}

// Sensitive values shown in place of Secret data.
const (
	Sensitive        = "(sensitive)"
	SensitiveChanged = "(sensitive, changed)"
)
