package schemagen_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

const (
	kaotoHead     = "apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\n"
	kaoto         = kaotoHead + "metadata: {name: k, namespace: demo}\n"
	componentHead = "apiVersion: wavesmith.io/v1alpha1\nkind: Component\n"
	component     = componentHead + "metadata: {name: c, namespace: demo}\n"
	chart         = "spec: {source: {chart: {path: chart}}"
	renderHead    = "apiVersion: wavesmith.io/v1alpha1\nkind: RenderConfig\n"
	renderConfig  = renderHead + "metadata: {name: p}\n"
)

// TestDocuments validates documents with the committed schemas and reads
// them with wavesmith (a render for Kaoto and Component, the project file
// reader for RenderConfig). schema lists the fields the schema's errors
// point at (nil: valid); wavesmith is a part of wavesmith's error (empty:
// accepted). Where the two disagree, difference says why: every
// disagreement is deliberate and documented (README, "Editor schemas"), or
// it is a finding.
func TestDocuments(t *testing.T) {
	cases := map[string]struct {
		reason     string
		kind       string
		doc        string
		schema     []string
		wavesmith  string
		difference string
	}{
		// Controls: valid documents pass both.
		"KaotoValid": {
			reason: "a Kaoto with every spec field",
			kind:   "Kaoto", doc: kaotoHead + "metadata: {name: k, namespace: demo, labels: {app: x}, annotations: {wavesmith.io/apply-order: '-3', wavesmith.io/adoption-policy: IfUnowned, example.com/note: free}}\nspec: {image: x, ingress: {host: h.example.com, path: /p}}\n",
		},
		"KaotoStatus": {
			reason: "a Kaoto read back from a cluster, with its status",
			kind:   "Kaoto", doc: kaoto + "spec: {ingress: {}}\nstatus: {phase: Ready, endpoint: http://x}\n",
		},
		"ComponentChart": {
			reason: "a Component with a chart source",
			kind:   "Component", doc: component + chart + ", wave: -32768, policies: {update: ssa-merge}, statusHints: [{kind: Widget, hint: has-ready-condition}]}\n",
		},
		"ComponentKustomization": {
			reason: "a Component with a kustomization source and free-form values",
			kind:   "Component", doc: component + "spec: {source: {kustomization: {path: kust, template: false}}, values: {a: [1, {b: c}], d: null}}\n",
		},
		"RenderConfigValid": {
			reason: "the README's project file",
			kind:   "RenderConfig", doc: renderConfig + "spec: {inputs: [deploy], output: out, platform: openshift, wave: 2, dialects: [argocd], policies: {update: ssa-merge}, flux: {source: GitRepository/flux-system, timeout: 5m}, argocd: {repo: https://git.example.com/x.git}}\n",
		},
		"RenderConfigDialectsNoneCombined": {
			reason: "none beside an engine contradicts itself",
			kind:   "RenderConfig", doc: renderConfig + "spec: {dialects: [argocd, none]}\n",
			wavesmith:  "dialect none cannot be combined with argocd",
			difference: "a list that holds none and an engine is refused by wavesmith only",
		},
		"RenderConfigBare": {
			reason: "a RenderConfig needs no metadata and no spec",
			kind:   "RenderConfig", doc: renderHead,
		},

		// Both refuse.
		"UnknownFieldTypo": {
			reason: "a misspelt spec field",
			kind:   "Kaoto", doc: kaoto + "spec: {imag: x}\n",
			schema: []string{"spec.imag"}, wavesmith: `spec.imag: invalid value: unknown field "imag"`,
		},
		"UnknownNestedField": {
			reason: "a misspelt field of a nested object",
			kind:   "Kaoto", doc: kaoto + "spec: {ingress: {hots: h}}\n",
			schema: []string{"spec.ingress.hots"}, wavesmith: `spec.ingress.hots: invalid value: unknown field "hots"`,
		},
		"WrongType": {
			reason: "a number where a string belongs",
			kind:   "Kaoto", doc: kaoto + "spec: {image: 3}\n",
			schema: []string{"spec.image"}, wavesmith: "spec.image: invalid value: want a string",
		},
		"ListForMapping": {
			reason: "a list where a mapping belongs",
			kind:   "Kaoto", doc: kaoto + "spec: {ingress: [a]}\n",
			schema: []string{"spec.ingress"}, wavesmith: "spec.ingress: invalid value: want a mapping, got a list",
		},
		"MissingName": {
			reason: "a spec without metadata.name",
			kind:   "Kaoto", doc: kaotoHead + "metadata: {namespace: demo}\n",
			schema: []string{"metadata.name"}, wavesmith: "metadata.name: invalid value: metadata.name is required",
		},
		"MissingMetadata": {
			reason: "a spec without metadata",
			kind:   "Kaoto", doc: kaotoHead,
			schema: []string{"metadata"}, wavesmith: "metadata.name is required",
		},
		"GenerateName": {
			reason: "generateName instead of a name",
			kind:   "Kaoto", doc: kaotoHead + "metadata: {generateName: k-, namespace: demo}\n",
			schema: []string{"metadata.generateName", "metadata.name"}, wavesmith: "metadata.generateName is not supported",
		},
		"NameRules": {
			reason: "a name the API server refuses",
			kind:   "Kaoto", doc: kaotoHead + "metadata: {name: K_1, namespace: demo}\n",
			schema: []string{"metadata.name"}, wavesmith: "metadata.name: invalid value: refused by the API server's rules",
		},
		"LabelNotString": {
			reason: "a label value that is a number",
			kind:   "Kaoto", doc: kaotoHead + "metadata: {name: k, namespace: demo, labels: {a: 1}}\n",
			schema: []string{"metadata.labels.a"}, wavesmith: "metadata.labels.a: invalid value: value must be a string",
		},
		"LabelValueRules": {
			reason: "a label value the API server refuses",
			kind:   "Kaoto", doc: kaotoHead + "metadata: {name: k, namespace: demo, labels: {a: 'x y'}}\n",
			schema: []string{"metadata.labels.a"}, wavesmith: "metadata.labels: invalid value: refused by the API server's rules",
		},
		"UnknownWavesmithAnnotation": {
			reason: "a misspelt wavesmith.io/ annotation",
			kind:   "Kaoto", doc: kaotoHead + "metadata: {name: k, namespace: demo, annotations: {wavesmith.io/aply-order: '1'}}\n",
			schema: []string{"metadata.annotations.wavesmith.io/aply-order"}, wavesmith: "metadata.annotations[wavesmith.io/aply-order]: invalid annotation: unknown wavesmith annotation",
		},
		"OrderNotInteger": {
			reason: "an apply-order that is not an integer",
			kind:   "Kaoto", doc: kaotoHead + "metadata: {name: k, namespace: demo, annotations: {wavesmith.io/apply-order: first}}\n",
			schema: []string{"metadata.annotations.wavesmith.io/apply-order"}, wavesmith: `"first" is not an integer`,
		},
		"SourceTypo": {
			reason: "a misspelt source: unknown, and then neither source is set",
			kind:   "Component", doc: component + "spec: {source: {chrt: {path: chart}}}\n",
			schema: []string{"spec.source.chart", "spec.source.chrt", "spec.source.kustomization"}, wavesmith: `spec.source.chrt: invalid value: unknown field "chrt"`,
		},
		"TwoSources": {
			reason: "both sources",
			kind:   "Component", doc: component + "spec: {source: {chart: {path: chart}, kustomization: {path: kust}}}\n",
			schema: []string{"spec.source"}, wavesmith: "spec.source: invalid value: set exactly one of chart and kustomization",
		},
		"NoSource": {
			reason: "an empty source",
			kind:   "Component", doc: component + "spec: {source: {}}\n",
			schema: []string{"spec.source.chart", "spec.source.kustomization"}, wavesmith: "spec.source: invalid value: set exactly one of chart and kustomization",
		},
		"MissingSpec": {
			reason: "a Component without spec",
			kind:   "Component", doc: component,
			schema: []string{"spec"}, wavesmith: "spec.source: invalid value: spec.source is required",
		},
		"MissingSource": {
			reason: "a Component without spec.source",
			kind:   "Component", doc: component + "spec: {}\n",
			schema: []string{"spec.source"}, wavesmith: "spec.source: invalid value: set exactly one of chart and kustomization",
		},
		"MissingPath": {
			reason: "a chart source without a path",
			kind:   "Component", doc: component + "spec: {source: {chart: {}}}\n",
			schema: nil, wavesmith: "spec.source.chart.path: invalid value: a path (or repo, name and version) is required",
			difference: "a chart is a path, or a repository's repo, name and version: the CRD marks none of them required, wavesmith requires one of the two",
		},
		"MissingDependencyName": {
			reason: "a dependency without a name",
			kind:   "Component", doc: component + chart + ", dependsOn: [{namespace: x}]}\n",
			schema: []string{"spec.dependsOn[0].name"}, wavesmith: "spec.dependsOn[0].name: spec dependency: a name is required",
		},
		"WaveAsString": {
			reason: "a quoted wave",
			kind:   "Component", doc: component + chart + ", wave: '3'}\n",
			schema: []string{"spec.wave"}, wavesmith: "spec.wave: invalid value: want an integer",
		},
		"WaveFraction": {
			reason: "a wave with a fraction",
			kind:   "Component", doc: component + chart + ", wave: 1.5}\n",
			schema: []string{"spec.wave"}, wavesmith: "spec.wave: invalid value: want an integer",
		},
		"WaveOutOfRange": {
			reason: "a wave beyond an int16 (wavesmith names the child's annotation the wave becomes)",
			kind:   "Component", doc: component + chart + ", wave: 40000}\n",
			schema: []string{"spec.wave"}, wavesmith: "spec.wave: invalid value: 40000: want -32768..32767",
		},
		"PolicyValue": {
			reason: "a policy wavesmith does not know",
			kind:   "Component", doc: component + chart + ", policies: {update: merge}}\n",
			schema: []string{"spec.policies.update"}, wavesmith: `"merge" is not one of`,
		},
		"ValuesList": {
			reason: "values that are a list",
			kind:   "Component", doc: component + chart + ", values: [1]}\n",
			schema: []string{"spec.values"}, wavesmith: "spec.values: invalid value: must be a mapping",
		},
		"ValuesFilesString": {
			reason: "one values file as a string",
			kind:   "Component", doc: component + chart + ", valuesFiles: a.yaml}\n",
			schema: []string{"spec.valuesFiles"}, wavesmith: "spec.valuesFiles: invalid value: want a list",
		},
		"RenderConfigTypo": {
			reason: "a misspelt RenderConfig field",
			kind:   "RenderConfig", doc: renderConfig + "spec: {wav: 1}\n",
			schema: []string{"spec.wav"}, wavesmith: `unknown field "wav"`,
		},
		"RenderConfigNestedTypo": {
			reason: "a misspelt field of the Flux section",
			kind:   "RenderConfig", doc: renderConfig + "spec: {flux: {intervl: 1m}}\n",
			schema: []string{"spec.flux.intervl"}, wavesmith: `unknown field "intervl"`,
		},
		"RenderConfigTopLevelTypo": {
			reason: "a misspelt top-level field",
			kind:   "RenderConfig", doc: renderHead + "spce: {}\n",
			schema: []string{"spce"}, wavesmith: `unknown field "spce"`,
		},
		"RenderConfigWrongType": {
			reason: "a quoted wave",
			kind:   "RenderConfig", doc: renderConfig + "spec: {wave: '1'}\n",
			schema: []string{"spec.wave"}, wavesmith: "spec.wave: want an integer, got string",
		},
		"RenderConfigStringForList": {
			reason: "one input as a string",
			kind:   "RenderConfig", doc: renderConfig + "spec: {inputs: deploy}\n",
			schema: []string{"spec.inputs"}, wavesmith: "spec.inputs: want a list, got string",
		},
		"RenderConfigWaveRange": {
			reason: "a wave beyond an int16",
			kind:   "RenderConfig", doc: renderConfig + "spec: {wave: 40000}\n",
			schema: []string{"spec.wave"}, wavesmith: "spec.wave: 40000: want -32768..32767",
		},
		"RenderConfigPlatform": {
			reason: "an unknown platform",
			kind:   "RenderConfig", doc: renderConfig + "spec: {platform: k8s}\n",
			schema: []string{"spec.platform"}, wavesmith: `spec.platform: platform "k8s"`,
		},
		"RenderConfigDialect": {
			reason: "an unknown dialect",
			kind:   "RenderConfig", doc: renderConfig + "spec: {dialects: [fleet]}\n",
			schema: []string{"spec.dialects[0]"}, wavesmith: `spec.dialects: dialect "fleet"`,
		},
		"RenderConfigPolicy": {
			reason: "an unknown policy",
			kind:   "RenderConfig", doc: renderConfig + "spec: {policies: {delete: never}}\n",
			schema: []string{"spec.policies.delete"}, wavesmith: `spec.policies.delete: "never" is not one of`,
		},
		"RenderConfigWrongKind": {
			reason: "a project file of another kind",
			kind:   "RenderConfig", doc: "apiVersion: wavesmith.io/v1alpha1\nkind: RenderConfg\n",
			schema: []string{"kind"}, wavesmith: "want apiVersion wavesmith.io/v1alpha1 and kind RenderConfig",
		},
		"RenderConfigWrongAPIVersion": {
			reason: "a project file of another version",
			kind:   "RenderConfig", doc: "apiVersion: wavesmith.io/v1\nkind: RenderConfig\n",
			schema: []string{"apiVersion"}, wavesmith: "want apiVersion wavesmith.io/v1alpha1 and kind RenderConfig",
		},
		"RenderConfigLabel": {
			reason: "a label value that is a number",
			kind:   "RenderConfig", doc: renderHead + "metadata: {labels: {a: 1}}\n",
			schema: []string{"metadata.labels.a"}, wavesmith: "metadata.labels of type string",
		},

		// Deliberate differences.
		"WrongKind": {
			reason: "a document of another kind of the group",
			kind:   "Kaoto", doc: "apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto2\nmetadata: {name: k, namespace: demo}\n",
			schema:    []string{"kind"},
			wavesmith: "kind Kaoto2 is not served in designer.kaoto.io (served: Kaoto); did you mean kind Kaoto?",
		},
		"WrongComponentKind": {
			reason: "a misspelt kind",
			kind:   "Component", doc: "apiVersion: wavesmith.io/v1alpha1\nkind: Componnet\nmetadata: {name: c, namespace: demo}\n" + chart + "}\n",
			schema:    []string{"kind"},
			wavesmith: "did you mean kind Component?",
		},
		"TopLevelTypo": {
			reason: "a misspelt top-level field of a spec",
			kind:   "Kaoto", doc: kaoto + "spce: {image: x}\n",
			schema:     []string{"spce"},
			difference: "wavesmith passes top-level fields of a spec through (the API server prunes them); the schema flags them",
		},
		"MetadataTypo": {
			reason: "a misspelt metadata field",
			kind:   "Kaoto", doc: kaotoHead + "metadata: {name: k, namespace: demo, lables: {a: b}}\n",
			schema:     []string{"metadata.lables"},
			difference: "wavesmith passes metadata fields through; the schema allows name, namespace, labels and annotations only",
		},
		"MetadataServerField": {
			reason: "a field the API server writes",
			kind:   "RenderConfig", doc: renderHead + "metadata: {uid: x}\n",
			schema:     []string{"metadata.uid"},
			difference: "wavesmith reads any ObjectMeta field of a RenderConfig; the schema allows name, namespace, labels and annotations only",
		},
		"NullField": {
			reason: "an optional field set to null",
			kind:   "Kaoto", doc: kaoto + "spec: {image: null, ingress: {host: null}}\n",
			schema:     []string{"spec.image", "spec.ingress.host"},
			difference: "wavesmith reads null as absent; the schema, like the CRD, wants the field's type (an empty 'image:' is likely unfinished)",
		},
		"NullSource": {
			reason: "a null chart beside a kustomization",
			kind:   "Component", doc: component + "spec: {source: {chart: null, kustomization: {path: kust}}}\n",
			schema:     []string{"spec.source", "spec.source.chart"},
			difference: "wavesmith reads null as absent; the schema, like the CRD, wants the field's type",
		},
		"RenderConfigNull": {
			reason: "an optional RenderConfig field set to null",
			kind:   "RenderConfig", doc: renderConfig + "spec: {output: null}\n",
			schema:     []string{"spec.output"},
			difference: "wavesmith reads null as absent; the schema, like the CRD, wants the field's type",
		},
		"PlatformCase": {
			reason: "a platform in another case",
			kind:   "RenderConfig", doc: renderConfig + "spec: {platform: OpenShift, dialects: [ArgoCD]}\n",
			schema:     []string{"spec.dialects[0]", "spec.platform"},
			difference: "wavesmith reads platforms and dialects in any case; the schema offers the lowercase spellings",
		},
		"StatusHintWithoutHint": {
			reason: "a status hint without its hint (the CRD requires it)",
			kind:   "Component", doc: component + chart + ", statusHints: [{kind: Widget}]}\n",
			schema:    []string{"spec.statusHints[0].hint"},
			wavesmith: "spec.statusHints[0].hint: invalid value: a hint is required",
		},
		"RenderConfigDuration": {
			reason: "a timeout that is no duration",
			kind:   "RenderConfig", doc: renderConfig + "spec: {timeout: forever}\n",
			wavesmith:  `spec.timeout: "forever": want a positive duration`,
			difference: "durations, Kubernetes versions and references are checked by wavesmith only",
		},
		"RenderConfigKubeVersion": {
			reason: "a Kubernetes version that is no version",
			kind:   "RenderConfig", doc: renderConfig + "spec: {kubeVersion: latest}\n",
			wavesmith:  `spec.kubeVersion: "latest": want a Kubernetes version`,
			difference: "durations, Kubernetes versions and references are checked by wavesmith only",
		},
		"StatusHintValue": {
			reason: "a status hint wavesmith does not know",
			kind:   "Kaoto", doc: kaotoHead + "metadata: {name: k, namespace: demo, annotations: {wavesmith.io/status-hint: ready}}\n",
			wavesmith:  `status hint "ready" is not one of`,
			difference: "annotation values other than orders are checked by wavesmith only (it also reads policies in CamelCase)",
		},
	}
	drafts := compiled(t)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			inst := instance(t, []byte(tc.doc))
			for draft, schemas := range drafts {
				var got []string
				if err := schemas[tc.kind].Validate(inst); err != nil {
					got = fields(err, inst)
				}
				if diff := cmp.Diff(tc.schema, got); diff != "" {
					t.Errorf("%s (%s): schema errors at fields: -want +got:\n%s", tc.reason, draft, diff)
				}
			}
			werr := wavesmith(t, tc.kind, []byte(tc.doc))
			switch {
			case tc.wavesmith == "" && werr != nil:
				t.Errorf("%s: wavesmith refuses: %v", tc.reason, werr)
			case tc.wavesmith != "" && werr == nil:
				t.Errorf("%s: wavesmith accepts, want an error with %q", tc.reason, tc.wavesmith)
			case tc.wavesmith != "" && !strings.Contains(werr.Error(), tc.wavesmith):
				t.Errorf("%s: wavesmith: %v\nwant an error with %q", tc.reason, werr, tc.wavesmith)
			}
			if disagree := (tc.schema == nil) != (tc.wavesmith == ""); disagree != (tc.difference != "") {
				t.Errorf("%s: the schema and wavesmith disagree: %v, but the case says %q (document every difference, and only those)", tc.reason, disagree, tc.difference)
			}
		})
	}
}

// TestExamples validates every Kaoto and Component of testdata/examples,
// the README's project file and any .wavesmith.yaml of the repository
// with the schemas, and reads each with wavesmith.
func TestExamples(t *testing.T) {
	drafts := compiled(t)
	docs := map[string][]byte{}
	files, err := filepath.Glob("../../testdata/examples/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		for k, v := range documents(t, f) {
			docs[k] = v
		}
	}
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range append([]string{"../../README.md"}, pages...) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range projectFile.FindAllSubmatch(b, -1) {
			docs[filepath.Join(page, fmt.Sprint(i))] = m[1]
		}
	}
	err = filepath.WalkDir("../..", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "bin" || d.Name() == "out" || filepath.ToSlash(p) == "../../test/hostile/testdata/cases") {
			return filepath.SkipDir // the bad-input suite's files are wrong on purpose
		}
		if !d.IsDir() && d.Name() == ".wavesmith.yaml" {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			docs[p] = b
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for name, doc := range docs {
		var head struct{ Kind string }
		if err := yaml.Unmarshal(doc, &head); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		count[head.Kind]++
		for draft, schemas := range drafts {
			s, ok := schemas[head.Kind]
			if !ok {
				t.Errorf("%s: no schema for kind %q", name, head.Kind)
				continue
			}
			if err := s.Validate(instance(t, doc)); err != nil {
				t.Errorf("%s (%s): %v", name, draft, err)
			}
		}
		if head.Kind == "RenderConfig" {
			if err := wavesmith(t, head.Kind, doc); err != nil {
				t.Errorf("%s: wavesmith: %v", name, err)
			}
		}
	}
	// Kaoto and Component examples are rendered together by the render
	// tests (their sources lie beside them); here only the count.
	for _, k := range []string{"Kaoto", "Component", "RenderConfig"} {
		if count[k] == 0 {
			t.Errorf("no %s example found: the test would prove nothing", k)
		}
	}
}

// projectFile finds the README's project file examples: a yaml block
// starting with "# .wavesmith.yaml".
var projectFile = regexp.MustCompile("(?s)```yaml\n# \\.wavesmith\\.yaml\n(.*?)```")
