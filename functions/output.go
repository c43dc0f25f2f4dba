package functions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/manifest"
	"github.com/wavesmith/wavesmith/render"
)

// writeList writes the ResourceList as kyaml's framework writes it (the
// wrapping kind, the items, the functionConfig and the results, through
// kyaml's encoder), with the children after the items kept: each as
// render encoded it, under its dash.
func writeList(w io.Writer, rw *kio.ByteReadWriter, rl *framework.ResourceList, children [][]byte) error {
	var b bytes.Buffer
	head := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		yamlString("apiVersion"), yamlString(rw.WrappingAPIVersion),
		yamlString("kind"), yamlString(rw.WrappingKind),
	}}
	if err := encodeNode(&b, head); err != nil {
		return err
	}
	if len(rl.Items)+len(children) == 0 {
		b.WriteString("items: []\n")
	} else {
		b.WriteString("items:\n")
		// Each item kept as a sequence of one: what yaml.v3 writes for
		// the whole sequence, item by item (TestWriteListAsKyaml), but
		// its emitter keeps every event of a document to its end: at
		// 10,000 Kaotos one sequence grew that queue to tens of MB, 12%
		// of the run's CPU.
		one := &yaml.Node{Kind: yaml.SequenceNode, Content: make([]*yaml.Node, 1)}
		for _, n := range rl.Items {
			// As kyaml's writer does: no empty annotations.
			if err := yaml.ClearEmptyAnnotations(n); err != nil {
				return err
			}
			one.Content[0] = n.YNode()
			if err := encodeNode(&b, one); err != nil {
				return err
			}
		}
		// Room for the children at once, not by doubling (a copy and
		// fresh memory each time): each as encoded, with "- " or two
		// spaces before each line (lines of 16 bytes or more).
		n := 0
		for _, c := range children {
			n += len(c) + len(c)/8 + 2
		}
		b.Grow(n + 1<<10)
		for _, c := range children {
			appendItem(&b, c)
		}
	}
	tail := &yaml.Node{Kind: yaml.MappingNode}
	if rw.FunctionConfig != nil {
		tail.Content = append(tail.Content, yamlString("functionConfig"), rw.FunctionConfig.YNode())
	}
	if len(rl.Results) > 0 {
		// As kyaml's framework writes them.
		y, err := yaml.Marshal(rl.Results)
		if err != nil {
			return err
		}
		results, err := yaml.Parse(string(y))
		if err != nil {
			return err
		}
		tail.Content = append(tail.Content, yamlString("results"), results.YNode())
	}
	if len(tail.Content) > 0 {
		if err := encodeNode(&b, tail); err != nil {
			return err
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// place is an annotation that places an item in a file of the package:
// its path, or its index in the file.
type place struct {
	key  string
	path bool
}

// placeAnnotations are the item's path and index, in kpt's internal form
// and the legacy one, which kustomize and older kpt still read.
var placeAnnotations = []place{
	{kioutil.PathAnnotation, true}, {kioutil.IndexAnnotation, false},
	//lint:ignore SA1019 kustomize and older kpt still set and read the legacy path and index annotations
	{kioutil.LegacyPathAnnotation, true}, {kioutil.LegacyIndexAnnotation, false},
}

// value is the annotation's value for an item in the file path, the
// first and only one there.
func (p place) value(path string) string {
	if p.path {
		return path
	}
	return "0"
}

// childAnnotations returns the placeAnnotations a new child carries: the
// forms the input's items use (annos, as read before the run), which kyaml
// decides for every item it writes (kio.ReconcileInternalAnnotations; both
// forms when no item has either). Asked of kyaml itself, on an item that
// carries all of them.
func childAnnotations(annos map[string]map[string]string) ([]place, error) {
	probe, err := yaml.Parse("metadata:\n  name: probe\n")
	if err != nil {
		return nil, err
	}
	for _, p := range placeAnnotations {
		if err := probe.PipeE(yaml.SetAnnotation(p.key, p.value("probe.yaml"))); err != nil {
			return nil, err
		}
	}
	if err := kio.ReconcileInternalAnnotations([]*yaml.RNode{probe}, annos); err != nil {
		return nil, err
	}
	kept := probe.GetAnnotations()
	var places []place
	for _, p := range placeAnnotations {
		if _, ok := kept[p.key]; ok {
			places = append(places, p)
		}
	}
	return places, nil
}

// yamlString is a plain scalar node.
func yamlString(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }

// encodeNode appends n as one YAML document, with kyaml's encoder (its
// indentation, sequences compact), without a document marker.
func encodeNode(b *bytes.Buffer, n *yaml.Node) error {
	e := yaml.NewEncoder(b)
	if err := e.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{n}}); err != nil {
		return err
	}
	return e.Close()
}

// appendItem appends the object y (block YAML, each line ended) as one
// item of a compact sequence at column 0: "- " before its first line,
// two spaces before every other non-empty line.
func appendItem(b *bytes.Buffer, y []byte) {
	b.WriteString("- ")
	for first := true; len(y) > 0; first = false {
		line := y
		if i := bytes.IndexByte(y, '\n'); i >= 0 {
			line = y[:i+1]
		}
		y = y[len(line):]
		if !first && len(line) > 1 {
			b.WriteString("  ")
		}
		b.Write(line)
	}
	if b.Len() > 0 && b.Bytes()[b.Len()-1] != '\n' {
		b.WriteByte('\n')
	}
}

func flatten(err error) []error {
	var es manifest.Errors
	if errors.As(err, &es) {
		return es
	}
	return []error{err}
}

func errorResult(err error) *framework.Result {
	r := &framework.Result{Severity: framework.Error, Message: err.Error()}
	var me *manifest.Error
	if errors.As(err, &me) {
		r.Message = me.Err.Error()
		setLocation(r, me.File, me.Field, me.Ref)
	}
	return r
}

func warningResult(w manifest.Warning) *framework.Result {
	r := &framework.Result{Severity: framework.Warning, Message: w.Message}
	setLocation(r, w.File, w.Field, w.Ref)
	if r.ResourceRef == nil && w.Object != "" {
		r.Message = w.Object + ": " + r.Message
	}
	return r
}

func setLocation(r *framework.Result, file, field string, ref *manifest.Ref) {
	if file != "" {
		r.File = &framework.File{Path: file}
	}
	if ref != nil && ref.Kind != "" && ref.Name != "" {
		r.ResourceRef = &yaml.ResourceIdentifier{
			TypeMeta: yaml.TypeMeta{APIVersion: ref.APIVersion, Kind: ref.Kind},
			NameMeta: yaml.NameMeta{Name: ref.Name, Namespace: ref.Namespace},
		}
		if field != "" {
			r.Field = &framework.Field{Path: field}
		}
	} else if field != "" {
		r.Message = strings.TrimSpace(field + ": " + r.Message)
	}
}

// WrittenAnnotation records on a spec item the dialect annotations the
// function wrote there (an engine's wave, when the spec's children land in
// a later wave than the engine would read from the spec as written), as a
// JSON object of annotation to value. The next run removes those that
// still hold the value written before rendering, so that the function
// never reads its own output back as the user's choice: running it on its
// output gives what running it on the package as the user wrote it gives.
// An annotation the user changed since is the user's and stays.
const WrittenAnnotation = "fn.wavesmith.io/written"

// forgetWritten removes from a spec item what a previous run wrote on it
// (WrittenAnnotation) and the user has not changed since. The inventory
// and digest annotations stay in place: rendering rewrites them.
func forgetWritten(item *yaml.RNode) error {
	a := item.GetAnnotations()
	rec, ok := a[WrittenAnnotation]
	if !ok {
		return nil
	}
	var written map[string]string
	if err := json.Unmarshal([]byte(rec), &written); err != nil {
		return &manifest.Error{File: a[kioutil.PathAnnotation], Field: manifest.KeyPath("metadata.annotations", WrittenAnnotation),
			Object: strings.Trim(item.GetKind()+"/"+item.GetNamespace()+"/"+item.GetName(), "/"),
			Ref:    &manifest.Ref{APIVersion: item.GetApiVersion(), Kind: item.GetKind(), Namespace: item.GetNamespace(), Name: item.GetName()},
			Err:    fmt.Errorf("%w: %v (the function writes it; remove it to keep the annotations it lists as your own)", ErrWrittenRecord, err)}
	}
	clear := []string{WrittenAnnotation}
	for k, v := range written {
		if cur, ok := a[k]; ok && cur == v {
			clear = append(clear, k)
		}
	}
	sort.Strings(clear)
	for _, k := range clear {
		if err := item.PipeE(yaml.ClearAnnotation(k)); err != nil {
			return err
		}
	}
	return nil
}

// ErrWrittenRecord: a spec item's WrittenAnnotation does not parse.
var ErrWrittenRecord = errors.New("the record of what the function wrote does not parse")

// setWritten writes on a spec item the annotations the engine wrote on its
// copy of the spec, in a fixed order (the inventory and digest, then the
// dialects' annotations sorted, then their record), so that a run on the
// function's own output lays them out as a run on the user's package does.
func setWritten(item *yaml.RNode, sitem *render.Item) error {
	s := sitem.Object
	owned := []string{inventory.Inventory, inventory.RenderDigest}
	written := map[string]string{}
	for _, a := range sitem.Written {
		if a != inventory.Inventory && a != inventory.RenderDigest {
			owned = append(owned, a)
			written[a], _ = s.Annotation(a)
		}
	}
	for _, a := range owned {
		if v, ok := s.Annotation(a); ok {
			if err := item.PipeE(yaml.SetAnnotation(a, v)); err != nil {
				return fmt.Errorf("set %s on %s: %w", a, s.Key(), err)
			}
		}
	}
	if len(written) == 0 {
		return nil
	}
	rec, err := json.Marshal(written) // keys sorted
	if err != nil {
		return err
	}
	if err := item.PipeE(yaml.SetAnnotation(WrittenAnnotation, string(rec))); err != nil {
		return fmt.Errorf("set %s on %s: %w", WrittenAnnotation, s.Key(), err)
	}
	return nil
}
