package kustomize

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/types"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/wavesmith/wavesmith/internal/fsroot"
)

// KRM function annotations: a plugin configuration carrying one runs an
// executable or a container.
var functionAnnotations = []string{"config.kubernetes.io/function", "config.k8s.io/function"}

// ensureKustomization gives a folder without a kustomization one listing
// every *.yaml and *.yml file below it, sorted, except hidden files and
// folders and the kustomization files of subfolders. It returns false
// when there is nothing to list.
func (j *job) ensureKustomization(t *tree) (bool, error) {
	if f, err := kustomizationFile(t, t.top); f != "" || err != nil {
		return err == nil, err
	}
	res, err := t.yamlFiles()
	if err != nil || len(res) == 0 {
		return false, err
	}
	b, _ := sigsyaml.Marshal(map[string]any{"apiVersion": types.KustomizationVersion, "kind": types.KustomizationKind, "resources": res})
	t.put(path.Join(t.top, konfig.DefaultKustomizationFileName()), b)
	return true, nil
}

func isKustomizationName(base string) bool {
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		if base == n {
			return true
		}
	}
	return false
}

// kustomizationFile returns the kustomization file of dir ("" if none).
func kustomizationFile(t *tree, dir string) (string, error) {
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		p := path.Join(dir, n)
		e, ok, err := t.stat(p)
		if err != nil {
			return "", err
		}
		if ok && !e.dir {
			return p, nil
		}
	}
	return "", nil
}

// check walks the kustomizations from the top one and refuses, before
// kustomize reads anything, what cannot run offline and inside the
// folder: remote references of any form (kustomize would clone or
// download them), absolute paths and paths leaving the folder, files
// outside their kustomization's folder (kustomize's RootOnly load
// restriction), helmCharts, and generator, transformer and validator
// configurations that are not builtin plugins (exec, Go and container
// plugins, KRM functions).
//
// Only what the kustomizations reach is read, as kustomize build does: a
// file elsewhere in the folder never matters.
func (j *job) check(t *tree) error {
	c := &checker{j: j, t: t, seen: map[string]bool{}}
	return c.kustomization(c.t.top, false)
}

type checker struct {
	j    *job
	t    *tree
	seen map[string]bool
}

// target kinds a reference may name.
const (
	fileRef = 1 << iota
	dirRef
)

// kustomization checks the kustomization of dir (a path with symlinks
// resolved, as kustomize sees folders). plugins is set when the
// resources it lists are plugin configurations (it is listed under
// generators, transformers or validators).
func (c *checker) kustomization(dir string, plugins bool) error {
	key := dir + "\x00" + strconv.FormatBool(plugins)
	if c.seen[key] {
		return nil
	}
	c.seen[key] = true
	file, err := kustomizationFile(c.t, dir)
	if err != nil {
		return err
	}
	if file == "" {
		return c.j.refuse(dir, 0, "", "no kustomization file (%s) in this folder", strings.Join(konfig.RecognizedKustomizationFileNames(), ", "))
	}
	src, err := c.t.readFile(file)
	if err != nil {
		return err
	}
	if line, err := yamlBudget(src); err != nil {
		return c.j.refuse(c.t.source(file), line, "", "%w", err)
	}
	var k types.Kustomization
	if err := k.Unmarshal(src); err != nil {
		return c.j.refuse(c.t.source(file), 0, "", "%v", err)
	}
	var doc yaml.Node
	_ = yaml.Unmarshal(src, &doc) // only for line numbers; k parsed
	ck := &kustCheck{checker: c, dir: dir, file: file, doc: &doc, plugins: plugins}
	return ck.run(&k)
}

// kustCheck checks one kustomization file.
type kustCheck struct {
	*checker
	dir, file string
	doc       *yaml.Node
	plugins   bool
}

func (k *kustCheck) run(kust *types.Kustomization) error {
	if w := kust.CheckDeprecatedFields(); w != nil {
		for _, m := range *w {
			k.j.warn(k.t.source(k.file), "", m)
		}
	}
	switch {
	case len(kust.HelmCharts) > 0:
		return k.fail(field{"helmCharts"}, "helmCharts needs the helm binary (an exec plugin); render the chart with a chart Component instead")
	case kust.HelmGlobals != nil:
		return k.fail(field{"helmGlobals"}, "helmGlobals needs the helm binary (an exec plugin); render the chart with a chart Component instead")
	case len(kust.HelmChartInflationGenerator) > 0:
		return k.fail(field{"helmChartInflationGenerator"}, "helmChartInflationGenerator needs the helm binary (an exec plugin); render the chart with a chart Component instead")
	}
	for i, r := range kust.Resources {
		if err := k.resource(field{"resources", i}, r, fileRef|dirRef); err != nil {
			return err
		}
	}
	//lint:ignore SA1019 bases is deprecated in kustomize, yet kustomize build still reads it from users' files: it must be checked like resources
	bases := kust.Bases
	for _, l := range []struct {
		name  string
		paths []string
	}{{"bases", bases}, {"components", kust.Components}} {
		for i, p := range l.paths {
			if err := k.resource(field{l.name, i}, p, dirRef); err != nil {
				return err
			}
		}
	}
	for _, l := range []struct {
		name  string
		paths []string
	}{{"generators", kust.Generators}, {"transformers", kust.Transformers}, {"validators", kust.Validators}} {
		for i, p := range l.paths {
			if err := k.plugin(field{l.name, i}, p); err != nil {
				return err
			}
		}
	}
	// Fields naming files only, each with its path.
	// yaml: kustomize parses the file as YAML (or JSON); the other files
	// (generator sources) are data.
	type entry struct {
		f    field
		p    string
		yaml bool
	}
	var files []entry
	add := func(yaml bool, p string, f ...any) {
		if p != "" {
			files = append(files, entry{field(f), p, yaml})
		}
	}
	// Inline patches are YAML kustomize parses too.
	var inline []entry
	for i, p := range kust.Crds {
		add(true, p, "crds", i)
	}
	for i, p := range kust.Configurations {
		add(true, p, "configurations", i)
	}
	//lint:ignore SA1019 deprecated in kustomize, yet kustomize build still reads it from users' files: every path it names must be checked
	for i, p := range kust.PatchesStrategicMerge {
		if inlineYAML(string(p)) {
			inline = append(inline, entry{field{"patchesStrategicMerge", i}, string(p), true})
		} else {
			add(true, string(p), "patchesStrategicMerge", i)
		}
	}
	//lint:ignore SA1019 deprecated in kustomize, yet kustomize build still reads it from users' files: every path it names must be checked
	for i, p := range kust.PatchesJson6902 {
		add(true, p.Path, "patchesJson6902", i, "path")
		inline = append(inline, entry{field{"patchesJson6902", i, "patch"}, p.Patch, true})
	}
	for i, p := range kust.Patches {
		add(true, p.Path, "patches", i, "path")
		inline = append(inline, entry{field{"patches", i, "patch"}, p.Patch, true})
	}
	for i, r := range kust.Replacements {
		add(true, r.Path, "replacements", i, "path")
	}
	add(true, kust.OpenAPI["path"], "openapi", "path")
	gens := func(name string, i int, s types.KvPairSources) {
		for n, p := range s.FileSources {
			if _, after, ok := strings.Cut(p, "="); ok {
				p = after
			}
			add(false, p, name, i, "files", n)
		}
		for n, p := range s.EnvSources {
			add(false, p, name, i, "envs", n)
		}
		add(false, s.EnvSource, name, i, "env")
	}
	for i, g := range kust.ConfigMapGenerator {
		gens("configMapGenerator", i, g.KvPairSources)
	}
	for i, g := range kust.SecretGenerator {
		gens("secretGenerator", i, g.KvPairSources)
	}
	for _, e := range inline {
		if err := k.inline(e.f, e.p); err != nil {
			return err
		}
	}
	for _, e := range files {
		t, _, err := k.ref(e.f, e.p, fileRef)
		if err != nil {
			return err
		}
		if err := k.contents(e.f, t, e.yaml); err != nil {
			return err
		}
	}
	return nil
}

// contents checks the file t (relative to the folder) the kustomization
// names at f, before kustomize reads it: kustomize reads a file
// whole and expands every YAML alias. A file of more than
// fsroot.MaxFileSize bytes is refused unread; a file kustomize parses
// as YAML (isYAML) is refused when its aliases expand beyond the
// decoding budgets (manifest.MaxAliasNodes, manifest.MaxNodes).
func (k *kustCheck) contents(f field, t string, isYAML bool) error {
	e, ok, err := k.t.stat(t)
	switch {
	case err != nil:
		return err
	case !ok || e.dir:
		return nil // ref has checked it; kustomize reports a change
	case e.size > fsroot.MaxFileSize:
		return k.fail(f, "%s: %w: %d bytes, more than %d (the most wavesmith reads)", k.j.path(k.t.source(t)), fsroot.ErrTooLarge, e.size, fsroot.MaxFileSize)
	}
	if !isYAML {
		return nil
	}
	b, err := k.t.readFile(t)
	if err != nil {
		return err
	}
	if line, err := yamlBudget(b); err != nil {
		return k.fail(f, "%s:%d: %w", k.j.path(k.t.source(t)), line, err)
	}
	return nil
}

// inline checks YAML the kustomization holds as a string at f (an
// inline patch or plugin configuration), which kustomize parses too.
func (k *kustCheck) inline(f field, s string) error {
	if s == "" {
		return nil
	}
	if line, err := yamlBudget([]byte(s)); err != nil {
		return k.fail(f, "inline YAML line %d: %w", line, err)
	}
	return nil
}

// resource checks an entry of resources (a file or a folder), bases or
// components (folders): want says which.
func (k *kustCheck) resource(f field, p string, want int) error {
	t, isDir, err := k.ref(f, p, want)
	if err != nil {
		return err
	}
	if isDir {
		return k.kustomization(t, k.plugins)
	}
	if err := k.contents(f, t, true); err != nil {
		return err
	}
	if k.plugins {
		return k.pluginFile(f, t)
	}
	return nil
}

// plugin checks an entry of generators, transformers or validators: an
// inline configuration, a file of configurations or a kustomization
// whose resources are configurations.
func (k *kustCheck) plugin(f field, p string) error {
	if inlineYAML(p) {
		if err := k.inline(f, p); err != nil {
			return err
		}
		return k.pluginConfigs(f, k.t.source(k.file), []byte(p))
	}
	t, isDir, err := k.ref(f, p, fileRef|dirRef)
	if err != nil {
		return err
	}
	if isDir {
		return k.kustomization(t, true)
	}
	if err := k.contents(f, t, true); err != nil {
		return err
	}
	return k.pluginFile(f, t)
}

// pluginFile checks a file of plugin configurations.
func (k *kustCheck) pluginFile(f field, t string) error {
	b, err := k.t.readFile(t)
	if err != nil {
		return err
	}
	return k.pluginConfigs(f, k.t.source(t), b)
}

// pluginConfigs refuses configurations of anything but a builtin plugin,
// and KRM functions. file names the configuration's file in messages.
func (k *kustCheck) pluginConfigs(f field, file string, data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return nil // not YAML: kustomize reports it
		}
		if m == nil {
			continue
		}
		av, _ := m["apiVersion"].(string)
		kind, _ := m["kind"].(string)
		md, _ := m["metadata"].(map[string]any)
		ann, _ := md["annotations"].(map[string]any)
		for _, a := range functionAnnotations {
			if _, ok := ann[a]; ok {
				return k.fail(f, "%s %s in %s is a KRM function (%s): exec and container plugins are refused; render its output into the folder instead", av, kind, file, a)
			}
		}
		if av != konfig.BuiltinPluginApiVersion {
			return k.fail(f, "%s %s in %s is an external (exec or Go) plugin: only kustomize's builtin plugins (apiVersion: builtin) are allowed", av, kind, file)
		}
		if kind == "HelmChartInflationGenerator" {
			return k.fail(f, "HelmChartInflationGenerator in %s needs the helm binary (an exec plugin); render the chart with a chart Component instead", file)
		}
	}
}

// ref resolves a path of the kustomization, refusing remote, absolute
// and escaping paths and paths that do not exist in the folder. It
// returns the path relative to the folder and whether it is a folder.
func (k *kustCheck) ref(f field, p string, want int) (string, bool, error) {
	if remote(p) {
		return "", false, k.fail(f, "remote reference %q: wavesmith renders offline and never fetches; vendor it into the repository", p)
	}
	if path.IsAbs(p) || strings.HasPrefix(p, `\`) || (len(p) > 1 && p[1] == ':') {
		return "", false, k.fail(f, "absolute path %q: give a path relative to the kustomization", p)
	}
	t := path.Join(k.dir, p)
	if t == ".." || strings.HasPrefix(t, "../") {
		return "", false, k.fail(f, "%q leaves %s", p, k.t.bound())
	}
	e, ok, err := k.t.stat(t)
	switch {
	case err != nil:
		return "", false, err
	case !ok:
		return "", false, k.fail(f, "%q does not exist", p)
	case !e.dir && want&fileRef != 0:
		if !withinSlash(e.real, k.dir) {
			return "", false, k.fail(f, "file %q is outside the kustomization's folder %s: kustomize loads files only at or below it (load restrictor RootOnly)", p, k.j.path(k.dir))
		}
		return t, false, nil
	case e.dir && want&dirRef != 0:
		return e.real, true, nil
	}
	return "", false, k.fail(f, "%q is a %s; a %s is expected here", p, kindName(e.dir), kindName(want == dirRef))
}

// withinSlash reports whether the slash path p is dir or below it ("." holds
// everything).
func withinSlash(p, dir string) bool {
	return dir == "." || p == dir || strings.HasPrefix(p, dir+"/")
}

func kindName(dir bool) string {
	if dir {
		return "folder"
	}
	return "file"
}

// fail is an ErrKustomization error at a field of the kustomization file.
func (k *kustCheck) fail(f field, format string, args ...any) error {
	return k.j.refuse(k.t.source(k.file), f.line(k.doc), f.String(), format, args...)
}

var scpUser = regexp.MustCompile(`^[a-z][a-z0-9-]*@`)

// remote reports whether kustomize would treat p as a git repository or
// an HTTP file: any scheme (https://, ssh://, file://...), a git:: prefix,
// an scp-like user@host:path, a github.com path, or a ref query. It errs
// on the side of remote.
func remote(p string) bool {
	s := strings.ToLower(strings.TrimSpace(p))
	s = strings.TrimPrefix(s, "git::")
	return strings.Contains(s, "://") || scpUser.MatchString(s) ||
		strings.HasPrefix(s, "github.com/") || strings.HasPrefix(s, "github.com:") ||
		strings.Contains(s, "?ref=") || strings.Contains(s, "?version=") || strings.Contains(s, "?timeout=") || strings.Contains(s, "?submodules=")
}

// inlineYAML reports whether s is YAML content (a mapping) rather than a
// path, the way kustomize tells inline patches and plugin configurations
// from file names.
func inlineYAML(s string) bool {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(s), &n); err != nil {
		return strings.Contains(s, "\n")
	}
	return len(n.Content) > 0 && n.Content[0].Kind == yaml.MappingNode
}

// field is a path into a YAML document: keys and indexes.
type field []any

func (f field) String() string {
	var b strings.Builder
	for _, e := range f {
		switch v := e.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", v)
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(v)
		}
	}
	return b.String()
}

// line returns the line of the deepest element of f found in doc.
func (f field) line(doc *yaml.Node) int {
	if doc == nil || len(doc.Content) == 0 {
		return 0
	}
	n, line := doc.Content[0], 0
	for _, e := range f {
		var next *yaml.Node
		switch v := e.(type) {
		case string:
			if n.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(n.Content); i += 2 {
					if n.Content[i].Value == v {
						line, next = n.Content[i].Line, n.Content[i+1]
						break
					}
				}
			}
		case int:
			if n.Kind == yaml.SequenceNode && v < len(n.Content) {
				next = n.Content[v]
				line = next.Line
			}
		}
		if next == nil {
			break
		}
		n = next
	}
	return line
}
