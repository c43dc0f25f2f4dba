package manifest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type opaque struct{ Raw []byte }

type inner struct {
	Name string `json:"name"`
}

type checked struct {
	Count int32   `json:"count"`
	Big   int64   `json:"big,omitempty"`
	On    *bool   `json:"on,omitempty"`
	Items []inner `json:"items"`
	Free  *opaque `json:"free,omitempty"`
	Skip  string  `json:"-"`
}

var errMine = errors.New("mine")

func TestCheckFields(t *testing.T) {
	objs, err := Decode("f.yaml", []byte("apiVersion: x/v1\nkind: K\nmetadata: {name: n}\nspec:\n  count: 3000000000\n  big: x\n  on: 1\n  items:\n  - name: 1\n  - nam: a\n  free: {anything: [1]}\n  wat.io/x: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	o := objs[0]
	type got struct {
		Line  int
		Field string
		Msg   string
	}
	run := func(fc FieldCheck) []got {
		var out []got
		for _, e := range CheckFields(o, "spec", o.Map["spec"], reflect.TypeOf(checked{}), fc) {
			var me *Error
			if !errors.As(e, &me) {
				t.Fatalf("not located: %v", e)
			}
			out = append(out, got{me.Line, me.Field, me.Err.Error()})
		}
		return out
	}
	common := []got{
		{6, "spec.big", "invalid value: want an integer, got string"},
		{9, "spec.items[0].name", "invalid value: want a string, got a number"},
		{10, "spec.items[1].nam", `invalid value: unknown field "nam" (known: name)`},
		{7, "spec.on", "invalid value: want a boolean, got a number"},
		{12, "spec[wat.io/x]", `invalid value: unknown field "wat.io/x" (known: big, count, free, items, on)`},
	}
	cases := map[string]struct {
		fc   FieldCheck
		want []got
	}{
		"Component": {fc: FieldCheck{Opaque: []reflect.Type{reflect.TypeOf(opaque{})}}, want: common},
		"RenderConfig": {fc: FieldCheck{Int32Range: true, Opaque: []reflect.Type{reflect.TypeOf(opaque{})}},
			want: append([]got{common[0], {5, "spec.count", "invalid value: want an integer, got a number"}}, common[1:]...)},
		"NotOpaque": {fc: FieldCheck{},
			want: append(append(append([]got(nil), common[:1]...), got{11, "spec.free.anything", `invalid value: unknown field "anything" (known: )`}), common[1:]...)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, run(tc.fc)); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
		})
	}
	wrapped := CheckFields(o, "spec", o.Map["spec"], reflect.TypeOf(checked{}), FieldCheck{Err: func(msg string) error { return errors.Join(errMine, errors.New(msg)) }})
	for _, e := range wrapped {
		if !errors.Is(e, errMine) || errors.Is(e, ErrInvalid) {
			t.Errorf("the caller's wrapping is not kept: %v", e)
		}
	}
}
