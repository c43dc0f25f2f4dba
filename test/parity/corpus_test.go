package parity

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// corpusFile lists the cases; see README.md for its format.
const corpusFile = "corpus.yaml"

// corpus is the parsed corpus.yaml.
type corpus struct {
	Modules []module   `json:"modules"`
	Cases   []caseSpec `json:"cases"`
}

// module is one Go module of the proxy, pinned by version and hash (the
// h1: hash go.sum would record), so that a case always sees the same
// bytes.
type module struct {
	Path    string `json:"path"`
	Version string `json:"version"`
	Sum     string `json:"sum"`
}

func (m module) String() string { return m.Path + "@" + m.Version }

// caseSpec is one chart or kustomization of a module.
type caseSpec struct {
	// Name is unique, "<project>/<folder>".
	Name string `json:"name"`
	// Module is path@version, one of corpus.Modules.
	Module string `json:"module"`
	// Dir is the chart or kustomization folder inside the module.
	Dir string `json:"dir"`
	// Copy is the folder inside the module copied into the test
	// repository (default: Dir); Dir must lie inside it. Copying more
	// than Dir puts the files around the source in the repository, as in
	// the project it comes from.
	Copy string `json:"copy,omitempty"`
	// Kind is chart or kustomization.
	Kind string `json:"kind"`
	// Exercises names the features the case covers (see README.md).
	Exercises []string `json:"exercises,omitempty"`
	// Variations are rendered one by one; none means one named "default".
	Variations []variation `json:"variations,omitempty"`
}

// variation is one set of parameters for a case.
type variation struct {
	Name string `json:"name"`
	// Values is YAML text: written verbatim into the Component's
	// spec.values and given to helm as the last -f file.
	Values string `json:"values,omitempty"`
	// ValuesFiles are paths relative to the test repository: values/...
	// for the files under testdata/values, src/... for files of the
	// copied module folder. spec.valuesFiles, and -f for helm, in order.
	ValuesFiles []string `json:"valuesFiles,omitempty"`
	// KubeVersion and APIVersions are the capabilities: --kube-version
	// and --api-versions for both tools.
	KubeVersion string   `json:"kubeVersion,omitempty"`
	APIVersions []string `json:"apiVersions,omitempty"`
	// Namespace is the release namespace (default "apps"): the
	// Component's namespace and helm's -n.
	Namespace string `json:"namespace,omitempty"`
	// ToolFails marks a negative case: the reference tool refuses the
	// variation (a values.schema.json violation, a chart that cannot be
	// rendered), and wavesmith must refuse it too.
	ToolFails bool `json:"toolFails,omitempty"`
	// ComponentConfig, for a kustomization, is written as
	// .component-config.yaml into its folder: wavesmith's own settings
	// (templateSuffix, delimiters), which kustomize does not read, so
	// the output must not change.
	ComponentConfig string `json:"componentConfig,omitempty"`
	// Random marks a chart that draws random values (randAlphaNum for a
	// password): the output of both tools differs from run to run, so only
	// the objects' keys are compared, and wavesmith must warn, naming the
	// template and the function (docs/component.md, Charts).
	Random bool `json:"random,omitempty"`
	// Served, for a chart, also renders it as a chart of a chart
	// repository (behind basic auth) and of an OCI registry, both served
	// in-process (served_test.go): wavesmith fetch, then wavesmith render
	// of a Component naming repo, name and version, against helm template
	// --repo --version and helm template oci://... --version.
	Served bool `json:"served,omitempty"`
}

var (
	caseName = regexp.MustCompile(`^[a-z0-9][a-z0-9.+_-]*(/[a-zA-Z0-9.+_-]+)+$`)
	varName  = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]*$`)
	h1Sum    = regexp.MustCompile(`^h1:[A-Za-z0-9+/]{43}=$`)
)

// loadCorpus reads and checks corpus.yaml: unknown fields, duplicate
// names, unlisted modules and malformed paths are errors.
func loadCorpus(t *testing.T) *corpus {
	t.Helper()
	data, err := os.ReadFile(corpusFile)
	if err != nil {
		t.Fatalf("reading the corpus: %v", err)
	}
	var c corpus
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		t.Fatalf("%s: %v", corpusFile, err)
	}
	if err := c.check(); err != nil {
		t.Fatalf("%s: %v", corpusFile, err)
	}
	return &c
}

func (c *corpus) check() error {
	mods := map[string]bool{}
	for i, m := range c.Modules {
		if m.Path == "" || m.Version == "" || !h1Sum.MatchString(m.Sum) {
			return fmt.Errorf("modules[%d]: path, version and an h1: sum are required", i)
		}
		if mods[m.String()] {
			return fmt.Errorf("modules[%d]: %s listed twice", i, m)
		}
		mods[m.String()] = true
	}
	used := map[string]bool{}
	names := map[string]bool{}
	for i, cs := range c.Cases {
		where := fmt.Sprintf("cases[%d] (%s)", i, cs.Name)
		switch {
		case !caseName.MatchString(cs.Name):
			return fmt.Errorf("%s: name must look like project/folder", where)
		case names[cs.Name]:
			return fmt.Errorf("%s: name used twice", where)
		case !mods[cs.Module]:
			return fmt.Errorf("%s: module %q is not listed under modules", where, cs.Module)
		case cs.Kind != "chart" && cs.Kind != "kustomization":
			return fmt.Errorf("%s: kind must be chart or kustomization, not %q", where, cs.Kind)
		case !cleanRel(cs.Dir):
			return fmt.Errorf("%s: dir %q must be a clean relative path", where, cs.Dir)
		case cs.Copy != "" && !cleanRel(cs.Copy):
			return fmt.Errorf("%s: copy %q must be a clean relative path", where, cs.Copy)
		case cs.Copy != "" && cs.Copy != "." && cs.Dir != cs.Copy && !strings.HasPrefix(cs.Dir, cs.Copy+"/"):
			return fmt.Errorf("%s: dir %q is not inside copy %q", where, cs.Dir, cs.Copy)
		}
		names[cs.Name] = true
		used[cs.Module] = true
		vars := map[string]bool{}
		for j, v := range cs.variations() {
			vw := fmt.Sprintf("%s: variations[%d] (%s)", where, j, v.Name)
			if !varName.MatchString(v.Name) || vars[v.Name] {
				return fmt.Errorf("%s: a unique lowercase name is required", vw)
			}
			vars[v.Name] = true
			if v.Served && (cs.Kind != "chart" || v.ToolFails || v.Random) {
				return fmt.Errorf("%s: served is for charts that render, with fixed values", vw)
			}
			if cs.Kind == "chart" && v.ComponentConfig != "" {
				return fmt.Errorf("%s: componentConfig is for kustomizations", vw)
			}
			if cs.Kind == "kustomization" && (v.Values != "" || len(v.ValuesFiles) > 0 || v.KubeVersion != "" || len(v.APIVersions) > 0) {
				return fmt.Errorf("%s: kustomize build takes no values or capabilities", vw)
			}
			for _, f := range v.ValuesFiles {
				if !cleanRel(f) || !(strings.HasPrefix(f, "values/") || strings.HasPrefix(f, "src/")) {
					return fmt.Errorf("%s: values file %q must be values/... or src/...", vw, f)
				}
			}
		}
	}
	for m := range mods {
		if !used[m] {
			return fmt.Errorf("module %s is listed but no case uses it", m)
		}
	}
	return nil
}

func cleanRel(p string) bool {
	return p != "" && !path.IsAbs(p) && path.Clean(p) == p && p != ".." && !strings.HasPrefix(p, "../")
}

func (cs caseSpec) variations() []variation {
	if len(cs.Variations) == 0 {
		return []variation{{Name: "default"}}
	}
	return cs.Variations
}

func (cs caseSpec) copyDir() string {
	if cs.Copy == "" {
		return cs.Dir
	}
	return cs.Copy
}

// srcDir is the case's folder relative to the test repository.
func (cs caseSpec) srcDir() string {
	rel := cs.Dir
	if c := cs.copyDir(); c != "." {
		rel = strings.TrimPrefix(strings.TrimPrefix(cs.Dir, c), "/")
	}
	if rel == "" {
		return "src"
	}
	return "src/" + rel
}

func (v variation) namespace() string {
	if v.Namespace == "" {
		return "apps"
	}
	return v.Namespace
}

// downloaded is what 'go mod download -json' says of a module.
type downloaded struct {
	Path, Version, Error, Dir, Sum, Zip string
}

// fetchModules downloads every module of the corpus with the go command
// (the module proxy; GOFLAGS=-mod=mod, outside any module), checks its
// hash against the corpus and returns what the go command says of each
// module (its folder in the module cache, its zip) by path@version. It
// fails the test, naming the module, when a download fails.
func fetchModules(t *testing.T, c *corpus) map[string]downloaded {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to download the corpus from the module proxy: %v", err)
	}
	got := map[string]downloaded{}
	// One module per command: given several, the go command checks them
	// together against its own version, and some modules of the corpus
	// declare a newer go than the one running the suite.
	for _, m := range c.Modules {
		cmd := exec.Command(goBin, "mod", "download", "-json", m.String())
		cmd.Dir = t.TempDir() // no go.mod here or above: the argument alone
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, runErr := cmd.Output()
		var d downloaded
		if err := json.Unmarshal(out, &d); err != nil {
			t.Fatalf("go mod download -json %s: %v (%v)\n%s", m, err, runErr, stderr.String())
		}
		switch {
		case d.Error != "":
			t.Fatalf("go mod download %s: %s", m, d.Error)
		case runErr != nil:
			t.Fatalf("go mod download %s: %v\n%s", m, runErr, stderr.String())
		case d.Sum != m.Sum:
			t.Fatalf("module %s: hash %s, the corpus pins %s", m, d.Sum, m.Sum)
		case d.Dir == "":
			t.Fatalf("go mod download %s: no folder in the module cache", m)
		}
		got[m.String()] = d
	}
	return got
}
