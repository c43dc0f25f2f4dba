// Package kustomize renders a Component whose source is a kustomization
// folder (spec.source.kustomization.path), in the manner of
// component-operator-runtime's KustomizeGenerator, offline and with
// kustomize's own library (sigs.k8s.io/kustomize/api/krusty).
//
// # Stages
//
//  1. Read: every regular file below the folder is read into memory.
//     Symlinks are followed only when they resolve inside the folder.
//     .component-ignore (gitignore syntax) leaves files out;
//     .component-config.yaml configures templating.
//  2. Template: the files are rendered with Go text/template (below).
//  3. Kustomization: a folder without kustomization.yaml,
//     kustomization.yml or Kustomization gets one listing all its *.yaml
//     and *.yml files, recursively and sorted, except hidden files and
//     kustomization files of subfolders.
//  4. Check: the kustomizations reachable from the top one are read and
//     what cannot run offline is refused (below), before kustomize sees
//     anything.
//  5. Build: krusty runs on an in-memory filesystem with kustomize
//     build's defaults: load restrictor RootOnly, builtin plugins only,
//     helm disabled, legacy output order. Builds are serialised by a
//     package mutex (kustomize keeps a global OpenAPI schema, reset
//     around each build) and a panic becomes an error naming the
//     Component.
//  6. Objects: namespaced objects without a namespace get the placement
//     namespace (spec.namespace, else the Component's); scope comes from
//     the built-in cluster-scoped kinds and the CRDs of the output.
//     Source.File is the folder. No wavesmith labels or annotations are
//     added here (the engine adds them).
//
// # Templates
//
// As in component-operator-runtime, with no templateSuffix every file is
// a template (files that are not UTF-8 are copied as they are); with
// templateSuffix (e.g. ".tpl") only files ending in it are, and the
// suffix is dropped from the output name. A plain kustomization without
// template actions renders unchanged; one that must keep "{{" literally
// sets templateSuffix or other delimiters. All templates form one
// associated set named by their path relative to the folder, so a define
// in any file is visible in all. Missing keys render as nothing
// (missingkey=zero, "<no value>" removed, as Helm does).
//
// .component-config.yaml keys: templateSuffix, leftTemplateDelimiter,
// rightTemplateDelimiter (default "{{" and "}}") and values (defaults).
// includedFiles and includedKustomizations are refused: only the folder
// is read. The data is .Values: the config's values, overridden by the
// Component's valuesFiles (in order) and spec.values, deep-merged.
//
// Functions: sprig's TxtFuncMap without env and expandenv; toYaml,
// mustToYaml, fromYaml, mustFromYaml, fromYamlArray, mustFromYamlArray,
// fromJson, mustFromJson, fromJsonArray, mustFromJsonArray, required,
// include and tpl as in Helm; namespace and name (the placement);
// kubernetesVersion (a *version.Info from Options.KubeVersion, defaulting
// to Helm's default); apiResources (sorted []*metav1.APIResourceList from
// Helm's default API versions plus Options.APIVersions; resource names
// guessed from kinds); lookup, which finds nothing (an empty map), as in
// helm template.
//
// # Refused
//
// Each with a *manifest.Error wrapping ErrKustomization that names the
// file, line and field: remote resources, bases, components and files
// (any URL, git reference or github.com path: kustomize would fetch
// them); absolute paths and paths leaving the folder; files outside
// their kustomization's folder; helmCharts, helmGlobals and
// HelmChartInflationGenerator (they run helm); generator, transformer and
// validator configurations that are not builtin plugins (exec, Go and
// container plugins) or that carry a KRM function annotation
// (config.kubernetes.io/function); symlinks resolving outside the folder.
// Template failures wrap ErrTemplate (and ErrRequired for required) and
// name the template file and line; a rendered YAML file that does not
// parse wraps ErrTemplate and manifest.ErrSyntax.
package kustomize
