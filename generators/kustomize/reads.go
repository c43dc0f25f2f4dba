package kustomize

import (
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/internal/fsroot"
	"github.com/wavesmith/wavesmith/manifest"
)

var _ generators.Reader = Generator{}

// maxReachedFolders bounds the kustomization folders Reads follows: far
// beyond any layout of bases, overlays and components.
const maxReachedFolders = 1000

// Reads implements generators.Reader: the component folder and every
// folder its kustomization reaches through resources, bases and
// components, recursively (a base beside the overlays), inside root, as
// paths relative to the folder of the spec's file. They are the
// Component's sources: loading never takes their files as objects, and
// refuses a spec among them. It reads leniently (a kustomization that
// does not parse, a template, reaches nothing more; remote and absolute
// entries and folders outside root are skipped): Generate reports the
// mistakes.
func (Generator) Reads(spec *manifest.Object, root string) []generators.Read {
	s, _ := spec.Map["spec"].(map[string]any)
	src, _ := s["source"].(map[string]any)
	k, _ := src["kustomization"].(map[string]any)
	rel, _ := k["path"].(string)
	if rel == "" {
		return nil
	}
	out := []generators.Read{{Field: sourceField, Path: rel}}
	file := spec.Source.File
	if file == "" || file == "-" || root == "" || filepath.IsAbs(rel) {
		return out
	}
	r, err := fsroot.OpenRoot(root)
	if err != nil {
		return out
	}
	defer r.Close()
	base := filepath.Dir(file)
	start := filepath.Join(base, rel)
	seen := map[string]bool{start: true}
	queue := []string{start}
	for len(queue) > 0 && len(seen) <= maxReachedFolders {
		dir := queue[0]
		queue = queue[1:]
		for _, ref := range reachedFolders(r, dir) {
			p := filepath.Join(dir, ref)
			if seen[p] {
				continue
			}
			if fi, err := r.Stat(p); err != nil || !fi.IsDir() {
				continue
			}
			seen[p] = true
			queue = append(queue, p)
			if within(p, start) {
				continue // already covered by the component folder
			}
			if r, err := filepath.Rel(base, p); err == nil {
				out = append(out, generators.Read{Field: sourceField, Path: r})
			}
		}
	}
	return out
}

// reachedFolders returns the local entries of resources, bases and
// components of dir's kustomization (those that may name folders).
func reachedFolders(r *fsroot.Root, dir string) []string {
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		b, err := r.ReadFile(filepath.Join(dir, n))
		if err != nil {
			continue
		}
		if _, err := yamlBudget(b); err != nil {
			return nil // aliases that would expand beyond the budget
		}
		var k struct {
			Resources  []string `json:"resources"`
			Bases      []string `json:"bases"`
			Components []string `json:"components"`
		}
		if sigsyaml.Unmarshal(b, &k) != nil {
			return nil
		}
		var out []string
		for _, e := range append(append(k.Resources, k.Bases...), k.Components...) {
			if e == "" || remote(e) || filepath.IsAbs(e) || strings.HasSuffix(e, ".yaml") || strings.HasSuffix(e, ".yml") || strings.HasSuffix(e, ".json") {
				continue
			}
			out = append(out, e)
		}
		return out
	}
	return nil
}
