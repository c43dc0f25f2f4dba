package manifest

import (
	"reflect"
	"testing"
)

// TestReserveAnnotations: the map reserved becomes the annotations when
// the first is set on an object that has none, and nothing else: not
// the labels, not the annotations of an object that has some, not a
// copy's.
func TestReserveAnnotations(t *testing.T) {
	same := func(a, b map[string]any) bool {
		return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
	}
	obj := func(meta map[string]any) *Object {
		return New(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta})
	}

	o, spare := obj(map[string]any{"name": "a"}), map[string]any{}
	o.ReserveAnnotations(spare)
	c := o.DeepCopy()
	o.SetLabel("app", "a")
	if same(o.Labels(), spare) {
		t.Fatal("SetLabel took the map reserved for annotations")
	}
	o.SetAnnotation("k", "v")
	if !same(o.Annotations(), spare) || spare["k"] != "v" {
		t.Fatalf("the first annotation of an object without any: annotations %v, want the reserved map holding it", o.Annotations())
	}
	o.DeleteAnnotation("k")
	o.SetAnnotation("k2", "v2")
	if same(o.Annotations(), spare) {
		t.Error("the reserved map was taken twice: once removed, annotations are made anew")
	}
	c.SetAnnotation("k", "copy")
	if same(c.Annotations(), spare) {
		t.Error("a DeepCopy took the original's reserved map")
	}

	had := map[string]any{"x": "y"}
	o, spare = obj(map[string]any{"name": "b", "annotations": had}), map[string]any{}
	o.ReserveAnnotations(spare)
	o.SetAnnotation("k", "v")
	if !same(o.Annotations(), had) || len(spare) != 0 {
		t.Errorf("an object with annotations: %v, reserved %v; want its own map holding both and the reserved one untouched", o.Annotations(), spare)
	}
}
