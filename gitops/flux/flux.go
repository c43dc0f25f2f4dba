package flux

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/gitops"
	"github.com/wavesmith/wavesmith/manifest"
)

// Dir is the tree folder holding the Flux files. It starts with '_', so
// it is never a namespace's folder (namespaces are DNS labels): a spec in
// a namespace called flux keeps its own folder, flux/.
const Dir = "_flux"

// LegacyDir is where trees rendered before Dir held their Flux files; a
// previous tree's handoffs are read from there when it has no Dir.
const LegacyDir = "flux"

const (
	// HandoffAnnotation names, on a stub, the wave that now holds the
	// object.
	HandoffAnnotation = "wavesmith.io/handoff-to"
)

// SourceRef is the Flux source the Kustomizations read the tree from.
type SourceRef struct {
	Kind, Name, Namespace string
}

// Options shape the Kustomizations.
type Options struct {
	// Name prefixes the Kustomization names: <Name>-wave-<n> (negative
	// waves: <Name>-wave-m<n>). Default "wavesmith".
	Name string
	// Namespace of the Kustomizations. Default "flux-system".
	Namespace string
	// Source defaults to GitRepository/flux-system, what flux bootstrap
	// creates.
	Source SourceRef
	// Path is the tree's folder inside the source, slash-separated
	// ("." for its root). Required.
	Path string
	// Interval and Timeout are Go durations. Defaults 10m and 5m.
	Interval, Timeout string
}

var sourceKinds = []string{"GitRepository", "OCIRepository", "Bucket", "ExternalArtifact"}

// ParseSource parses KIND/NAME or KIND/NAMESPACE/NAME.
func ParseSource(s string) (SourceRef, error) {
	parts := strings.Split(s, "/")
	var ref SourceRef
	switch len(parts) {
	case 2:
		ref = SourceRef{Kind: parts[0], Name: parts[1]}
	case 3:
		ref = SourceRef{Kind: parts[0], Namespace: parts[1], Name: parts[2]}
	default:
		return ref, gitops.Optionf("flux.source", "%q: want KIND/NAME or KIND/NAMESPACE/NAME", s)
	}
	return ref, nil
}

func (o Options) normalize() (Options, error) {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&o.Name, "wavesmith")
	def(&o.Namespace, "flux-system")
	def(&o.Source.Kind, "GitRepository")
	def(&o.Source.Name, "flux-system")
	def(&o.Interval, "10m")
	def(&o.Timeout, "5m")
	var errs []error
	// The name becomes the value of the kustomize.toolkit.fluxcd.io/name
	// owner label: at most 63 characters with the longest wave suffix.
	if msgs := validation.IsDNS1123Label(o.Name + "-wave-m32768"); len(msgs) > 0 {
		errs = append(errs, gitops.Optionf("flux.name", "%q: %s", o.Name, strings.Join(msgs, "; ")))
	}
	if msgs := validation.IsDNS1123Label(o.Namespace); len(msgs) > 0 {
		errs = append(errs, gitops.Optionf("flux.namespace", "%q: %s", o.Namespace, strings.Join(msgs, "; ")))
	}
	known := false
	for _, k := range sourceKinds {
		known = known || k == o.Source.Kind
	}
	if !known {
		errs = append(errs, gitops.Optionf("flux.source", "kind %q: want one of %s", o.Source.Kind, strings.Join(sourceKinds, ", ")))
	}
	if o.Source.Name == "" {
		errs = append(errs, gitops.Optionf("flux.source", "the source name is empty"))
	}
	for name, d := range map[string]string{"interval": o.Interval, "timeout": o.Timeout} {
		if v, err := time.ParseDuration(d); err != nil || v <= 0 {
			errs = append(errs, gitops.Optionf("flux."+name, "%q: want a positive duration such as 5m or 90s", d))
		}
	}
	if o.Path == "" {
		errs = append(errs, gitops.Optionf("treePath", "the path of the tree inside the source is required"))
	} else if p := path.Clean(o.Path); path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") {
		errs = append(errs, gitops.Optionf("treePath", "%q: want a path inside the source, relative to its root", o.Path))
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return o, errors.Join(errs...)
}

// WaveLabel is the name part of a wave: "3", "m5" for -5.
func WaveLabel(w int) string {
	if w < 0 {
		return "m" + strconv.Itoa(-w)
	}
	return strconv.Itoa(w)
}

func parseWaveLabel(s string) (int, bool) {
	neg := strings.HasPrefix(s, "m")
	n, err := strconv.Atoi(strings.TrimPrefix(s, "m"))
	if err != nil || n < 0 || (neg && n == 0) || strconv.Itoa(n) != strings.TrimPrefix(s, "m") {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// WaveDir is the tree folder of wave w: _flux/wave-<label>.
func WaveDir(w int) string { return Dir + "/wave-" + WaveLabel(w) }

// KustomizationName is the name of wave w's Kustomization.
func KustomizationName(name string, w int) string { return name + "-wave-" + WaveLabel(w) }

// wave is what Files writes for one wave.
type wave struct {
	n         int
	resources []string // tree paths of the objects, in output order
	// specTypes are the apiVersion/Kind of the specs in the wave, for
	// their health check expressions.
	specTypes map[[2]string]bool
	stubs     []gitops.Object
	dependsOn map[int]bool
}

// Files implements gitops.Engine: the Flux files of the tree when cfg.Flux
// is set.
func (Engine) Files(p *gitops.Plan, previous fs.FS, cfg *v1alpha1.RenderConfigSpec) (map[string][]byte, error) {
	if cfg == nil || cfg.Flux == nil {
		return nil, nil
	}
	f := cfg.Flux
	opts := Options{Name: f.Name, Namespace: f.Namespace, Path: cfg.TreePath, Interval: f.Interval, Timeout: f.Timeout}
	if f.Source != "" {
		src, err := ParseSource(f.Source)
		if err != nil {
			return nil, err
		}
		opts.Source = src
	}
	return Files(p, previous, opts)
}

// Files returns the Flux files of the plan's tree: _flux/kustomization.yaml listing one Kustomization per wave
// (_flux/wave-<n>.yaml) and, per wave, _flux/wave-<n>/kustomization.yaml
// listing that wave's object files plus any handoff stubs. previous is the
// tree being replaced (nil for a first render); it decides the stubs. Only
// its Flux folders are read, and of its object files only those the new
// tree no longer has at the same path. Objects resolve through relative
// paths outside the wave folder, which Flux allows (it builds with
// LoadRestrictionsNone; plain kustomize needs --load-restrictor
// LoadRestrictionsNone).
func Files(p *gitops.Plan, previous fs.FS, opts Options) (map[string][]byte, error) {
	opts, err := opts.normalize()
	if err != nil {
		return nil, err
	}
	old, err := previousWaves(previous, p.Objects)
	if err != nil {
		return nil, fmt.Errorf("%w (the handoffs of objects that change wave are read from there; delete its %s/ folder to render without them)", err, Dir)
	}
	waves := map[int]*wave{}
	get := func(n int) *wave {
		w := waves[n]
		if w == nil {
			w = &wave{n: n, dependsOn: map[int]bool{}}
			waves[n] = w
		}
		return w
	}
	var last *wave // objects come wave by wave: one lookup per wave
	for _, o := range p.Objects {
		w := last
		if w == nil || w.n != o.Wave {
			w = get(o.Wave)
			last = w
		}
		w.resources = append(w.resources, o.Path)
		if o.IsSpec {
			if w.specTypes == nil {
				w.specTypes = map[[2]string]bool{}
			}
			w.specTypes[[2]string{o.APIVersion, o.Key.Kind}] = true
		}
	}
	// Handoffs: an old wave that reconciles before the new one (an earlier
	// wave) would prune the object; an old wave left with no objects would
	// be deleted and its finalizer would delete the object.
	for _, it := range p.Objects {
		for _, w := range old[it.Key] {
			if w == it.Wave {
				continue
			}
			if w < it.Wave || waves[w] == nil || len(waves[w].resources) == 0 {
				get(w).stubs = append(get(w).stubs, it)
			}
		}
	}
	specDependencies(p, get)
	nums := make([]int, 0, len(waves))
	for n := range waves {
		nums = append(nums, n)
	}
	sort.Ints(nums)
	files := map[string][]byte{}
	var list []string
	for i, n := range nums {
		w := waves[n]
		if i > 0 {
			w.dependsOn[nums[i-1]] = true
		}
		dir := WaveDir(n)
		var stubs []string
		used := map[string]bool{}
		for _, it := range w.stubs {
			name := stubName(it.Key, used)
			files[dir+"/"+name] = stub(it, n)
			stubs = append(stubs, name)
		}
		// The objects' files, then the stubs: the list of a wave of
		// 35,000 objects written in one buffer of its size.
		k := make([]byte, 0, len(gitops.KustomizationHead)+gitops.ResourcesSize(up, w.resources)+gitops.ResourcesSize("", stubs))
		k = gitops.AppendResources(append(k, gitops.KustomizationHead...), up, w.resources)
		files[dir+"/kustomization.yaml"] = gitops.AppendResources(k, "", stubs)
		file := "wave-" + WaveLabel(n) + ".yaml"
		files[Dir+"/"+file] = kustomizationObject(w, opts)
		list = append(list, file)
	}
	files[Dir+"/kustomization.yaml"] = gitops.KustomizationFile(list)
	return files, nil
}

// specDependencies adds, for each spec that depends on others, a
// dependency of its earliest wave on the latest wave of each spec it
// depends on (the wave chain already implies it; the explicit edge
// documents it and survives a hand edit of the chain).
func specDependencies(p *gitops.Plan, get func(int) *wave) {
	for _, s := range p.Specs {
		for _, d := range s.DependsOn {
			if w := p.Specs[d].Last; w < s.First {
				get(s.First).dependsOn[w] = true
			}
		}
	}
}

// up leads from a wave's folder (_flux/wave-<n>) to the tree's root.
const up = "../../"

// previousWaves maps each object of the previous tree's Flux folders to
// the waves that held it (as an object or a stub). A path the new tree
// keeps (one of objects) holds the same object (paths are <spec
// folder>/<kind>-<name>), so only files it dropped and stubs are read.
func previousWaves(previous fs.FS, objects []gitops.Object) (map[manifest.Key][]int, error) {
	old := map[manifest.Key][]int{}
	if previous == nil {
		return old, nil
	}
	kfiles, err := fs.Glob(previous, Dir+"/wave-*/kustomization.yaml")
	if err == nil && len(kfiles) == 0 {
		kfiles, err = fs.Glob(previous, LegacyDir+"/wave-*/kustomization.yaml")
	}
	if err != nil {
		return nil, fmt.Errorf("previous tree: %w", err)
	}
	if len(kfiles) == 0 {
		return old, nil
	}
	sort.Strings(kfiles)
	// at gives the object at each path of the new tree (its index: a
	// map of small values).
	at := make(map[string]int, len(objects))
	for i, o := range objects {
		at[o.Path] = i
	}
	old = make(map[manifest.Key][]int, len(objects))
	var held []int // the first wave of each key, one allocation for most
	for _, kf := range kfiles {
		dir := path.Dir(kf)
		n, ok := parseWaveLabel(strings.TrimPrefix(path.Base(dir), "wave-"))
		if !ok {
			continue
		}
		b, err := fs.ReadFile(previous, kf)
		if err != nil {
			return nil, fmt.Errorf("previous tree: %w", err)
		}
		resources, ok := readResources(b)
		if !ok {
			var k struct {
				Resources []string `yaml:"resources"`
			}
			if err := yaml.Unmarshal(b, &k); err != nil {
				return nil, fmt.Errorf("previous tree: %s: %w: %v", kf, manifest.ErrInvalid, err)
			}
			resources = k.Resources
		}
		if held == nil {
			held = make([]int, 0, len(resources))
		}
		for _, r := range resources {
			p := joinUp(dir, r)
			if i, ok := at[p]; ok {
				key := objects[i].Key
				if ws := old[key]; ws != nil {
					old[key] = append(ws, n)
				} else {
					held = append(held, n)
					old[key] = held[len(held)-1 : len(held) : len(held)]
				}
				continue
			}
			b, err := fs.ReadFile(previous, p)
			if errors.Is(err, fs.ErrNotExist) {
				continue // gone from the old tree: nothing to hand off
			}
			if err != nil {
				return nil, fmt.Errorf("previous tree: %w", err)
			}
			objs, err := manifest.Decode(p, b)
			if err != nil {
				return nil, fmt.Errorf("previous tree: %w", err)
			}
			for _, o := range objs {
				old[o.Key()] = append(old[o.Key()], n)
			}
		}
	}
	return old, nil
}

// readResources reads the resources of a kustomization.yaml as
// gitops.KustomizationFile writes them: KustomizationHead, then a line
// "- <resource>" for each, every resource of the characters of a tree
// path ([A-Za-z0-9._/-], not first '-') and no YAML null. ok is false for
// any other file, which YAML then reads: the resources are those YAML
// reads, without the cost of a YAML parser on a list of 35,000 files.
func readResources(b []byte) (resources []string, ok bool) {
	rest, ok := bytes.CutPrefix(b, []byte(gitops.KustomizationHead))
	if !ok {
		return nil, false
	}
	resources = make([]string, 0, bytes.Count(rest, []byte{'\n'}))
	for len(rest) > 0 {
		line, after, found := bytes.Cut(rest, []byte{'\n'})
		r, ok := bytes.CutPrefix(line, []byte("- "))
		if !found || !ok || !plainResource(r) {
			return nil, false
		}
		resources = append(resources, string(r))
		rest = after
	}
	return resources, true
}

// plainResource reports whether YAML reads r, a sequence item, as the
// string r.
func plainResource(r []byte) bool {
	if len(r) == 0 || r[0] == '-' {
		return false
	}
	switch string(r) {
	case "null", "Null", "NULL":
		return false
	}
	for _, c := range r {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '/', c == '-':
		default:
			return false
		}
	}
	return true
}

// joinUp is path.Join(dir, r). Most often dir is a wave's folder (two
// segments: Dir or LegacyDir, wave-<n>) and r is up and a clean path
// below the root: the path itself, without a new string.
func joinUp(dir, r string) string {
	top, wave, _ := strings.Cut(dir, "/")
	if rest, ok := strings.CutPrefix(r, up); ok && (top == Dir || top == LegacyDir) && strings.HasPrefix(wave, "wave-") && !strings.Contains(wave, "/") &&
		plainPath(rest) {
		return rest
	}
	return path.Join(dir, r)
}

// plainPath reports whether p is a relative path of non-empty segments
// none of which is . or ..: path.Clean(p) == p, and no segment climbs.
func plainPath(p string) bool {
	start := 0
	for i := 0; i <= len(p); i++ {
		if i == len(p) || p[i] == '/' {
			if seg := p[start:i]; seg == "" || seg == "." || seg == ".." {
				return false
			}
			start = i + 1
		}
	}
	return true
}

func stubName(k manifest.Key, used map[string]bool) string {
	base := "handoff-" + strings.ToLower(k.Kind)
	if k.Group != "" {
		base += "." + k.Group
	}
	if k.Namespace != "" {
		base += "-" + k.Namespace
	}
	base += "-" + k.Name
	name := base + ".yaml"
	for i := 2; used[name]; i++ {
		name = fmt.Sprintf("%s-%d.yaml", base, i)
	}
	used[name] = true
	return name
}

func stub(it gitops.Object, from int) []byte {
	meta := map[string]any{
		"name": it.Key.Name,
		"annotations": map[string]any{
			SSAAnnotation:     "Ignore",
			HandoffAnnotation: "wave-" + WaveLabel(it.Wave),
		},
	}
	if it.Key.Namespace != "" {
		meta["namespace"] = it.Key.Namespace
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Handoff stub: this object moved from wave %d to wave %d. It keeps wave %d's\n", from, it.Wave, from)
	b.WriteString("# Kustomization from pruning it before the new wave adopts it; Flux never\n")
	b.WriteString("# applies it (ssa: Ignore). Safe to delete once Flux has reconciled.\n")
	manifest.Encode(&b, map[string]any{"apiVersion": it.APIVersion, "kind": it.Key.Kind, "metadata": meta})
	return b.Bytes()
}

// Health of a spec for kustomize-controller (healthCheckExprs, CEL on the
// object). kstatus alone reads a spec that wavesmith-status has not yet
// written as Current, so a wave could pass its health check before the
// status controller saw the spec: a spec is in progress until its status
// has observed its generation, failed when Stalled, current when Ready.
const (
	specInProgress = "!has(status.observedGeneration) || status.observedGeneration != metadata.generation"
	specFailed     = "status.?conditions.orValue([]).exists(c, c.type == 'Stalled' && c.status == 'True')"
	specCurrent    = "status.?conditions.orValue([]).exists(c, c.type == 'Ready' && c.status == 'True')"
)

func specHealthChecks(types map[[2]string]bool) []any {
	if len(types) == 0 {
		return nil
	}
	keys := make([][2]string, 0, len(types))
	for t := range types {
		keys = append(keys, t)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i][0] != keys[j][0] {
			return keys[i][0] < keys[j][0]
		}
		return keys[i][1] < keys[j][1]
	})
	var out []any
	for _, k := range keys {
		out = append(out, map[string]any{
			"apiVersion": k[0], "kind": k[1],
			"inProgress": specInProgress, "failed": specFailed, "current": specCurrent,
		})
	}
	return out
}

func kustomizationObject(w *wave, o Options) []byte {
	src := map[string]any{"kind": o.Source.Kind, "name": o.Source.Name}
	if o.Source.Namespace != "" {
		src["namespace"] = o.Source.Namespace
	}
	spec := map[string]any{
		"interval":  o.Interval,
		"path":      "./" + path.Clean(path.Join(o.Path, WaveDir(w.n))),
		"prune":     true,
		"sourceRef": src,
		"timeout":   o.Timeout,
		"wait":      true,
	}
	if exprs := specHealthChecks(w.specTypes); exprs != nil {
		spec["healthCheckExprs"] = exprs
	}
	if len(w.dependsOn) > 0 {
		var deps []int
		for d := range w.dependsOn {
			deps = append(deps, d)
		}
		sort.Sort(sort.Reverse(sort.IntSlice(deps)))
		var list []any
		for _, d := range deps {
			list = append(list, map[string]any{"name": KustomizationName(o.Name, d)})
		}
		spec["dependsOn"] = list
	}
	var b bytes.Buffer
	b.WriteString(gitops.TreeHeader)
	manifest.Encode(&b, map[string]any{
		"apiVersion": "kustomize.toolkit.fluxcd.io/v1",
		"kind":       "Kustomization",
		"metadata": map[string]any{
			"name":      KustomizationName(o.Name, w.n),
			"namespace": o.Namespace,
			"labels":    map[string]any{"app.kubernetes.io/managed-by": "wavesmith", "wavesmith.io/wave": WaveLabel(w.n)},
		},
		"spec": spec,
	})
	return b.Bytes()
}
