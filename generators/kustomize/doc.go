// Package kustomize renders a Component whose source is a kustomization
// folder (spec.source.kustomization.path), in the manner of
// component-operator-runtime's KustomizeGenerator, offline and with
// kustomize's own library (sigs.k8s.io/kustomize/api/krusty).
//
// # Stages
//
//  1. Open: the folder is resolved; .component-ignore (gitignore syntax)
//     leaves files out, .component-config.yaml configures templating.
//     The files are templates when spec.source.kustomization.template
//     says so, else when .component-config.yaml exists (a
//     component-operator-runtime folder). A plain folder stays on disk
//     and only what kustomize reaches is ever read: files elsewhere in
//     it never matter, whatever their names or content. A templated
//     folder is read whole into memory, as component-operator-runtime
//     does, and nothing outside it is read.
//  2. Template (templated folders only): the files are rendered with Go
//     text/template (below).
//  3. Kustomization: a folder without kustomization.yaml,
//     kustomization.yml or Kustomization gets one listing all its *.yaml
//     and *.yml files, recursively and sorted, except hidden files and
//     folders and kustomization files of subfolders.
//  4. Check: the kustomizations reachable from the top one are read and
//     what cannot run offline is refused (below), before kustomize sees
//     anything.
//  5. Build: krusty runs on a read-only view of the render root
//     (Options.Root; a templated folder is its own root) from the
//     folder's real path, with kustomize build's defaults: load
//     restrictor RootOnly (each kustomization's files at or below its
//     own folder, while resources, bases and components may name other
//     kustomization folders: a base beside its overlays), builtin
//     plugins only, helm disabled, legacy output order. Every read
//     resolves symlinks and refuses what leaves the root or is not a
//     regular file or folder. Builds are serialised (kustomize
//     keeps a global OpenAPI schema, reset around each build) and a
//     panic becomes an error naming the Component. A plain folder's
//     output is byte for byte kustomize build's, an overlay naming a
//     base beside it included.
//  6. Objects: namespaced objects without a namespace get the placement
//     namespace (spec.namespace, else the Component's); scope comes from
//     the built-in cluster-scoped kinds and the CRDs of the output.
//     Source.File is the folder. No wavesmith labels or annotations are
//     added here (the engine adds them).
//
// The context bounds the whole rendering: when it ends (a deadline), the
// render stops with ErrBudget wrapping the context's error, inside a
// template at its next step, during kustomize at once (the build left in
// the background fails at its next read of the folder).
//
// # Sources
//
// Generator implements generators.Reader: a Component reads its folder
// and every folder its kustomization reaches (resources, bases,
// components, recursively, inside the root). Loading never takes their
// files as objects of the render, and refuses a spec among them. A build reads at
// most 5,000 YAML documents (a base counts each time it is reached:
// kustomize's work grows with their square) and 256 MiB, and makes at
// most 5,000 objects and 64 MiB of YAML (buildbudget.go).
//
// # Templates
//
// As in component-operator-runtime, with no templateSuffix every file is
// a template (files that are not UTF-8 are copied as they are); with
// templateSuffix (e.g. ".tpl") only files ending in it are, and the
// suffix is dropped from the output name. A folder that must keep "{{"
// literally sets templateSuffix or other delimiters. All templates form
// one associated set named by their path relative to the folder, so a
// define in any file is visible in all. A missing map key is an error
// naming the template, line and key (missingkey=error); read optional
// keys with dig, hasKey or default values in .component-config.yaml. A
// nil value renders as nothing ("<no value>" removed, as Helm does).
//
// .component-config.yaml keys: templateSuffix, leftTemplateDelimiter,
// rightTemplateDelimiter (default "{{" and "}}") and values (defaults).
// includedFiles and includedKustomizations are refused: only the folder
// is read. The data is .Values: the config's values, overridden by the
// Component's valuesFiles (in order) and spec.values, deep-merged.
//
// Functions: the template sandbox's (internal/tmplsandbox, shared with
// the Helm generator: sprig's TxtFuncMap without env and expandenv;
// toYaml, toYamlPretty, fromYaml, fromYamlArray, toJson, fromJson,
// fromJsonArray, toToml and fromToml as in Helm; print, printf,
// println) without getHostByName (a render depends neither on the
// machine's environment nor on the network); now, date, htmlDate, toDate
// and mustToDate use UTC instead of the machine's time zone; mustToYaml,
// mustFromYaml, mustFromYamlArray, mustFromJson, mustFromJsonArray,
// required, include and tpl as in Helm; namespace and name (the
// placement); kubernetesVersion (a *version.Info from
// Options.KubeVersion, defaulting to Helm's default); apiResources
// (sorted []*metav1.APIResourceList from Helm's default API versions
// plus Options.APIVersions; resource names guessed from kinds); lookup,
// which finds nothing (an empty map), as in helm template. sprig's random
// and clock functions (randAlpha, uuidv4, genCA, now, ...) stay, as in
// Helm: a template that calls them renders differently each time.
//
// # Budget
//
// Templates run in the template sandbox (internal/tmplsandbox), with the
// limits a Helm chart's templates have too (tmplsandbox.Default): at most
// 10,000,000 steps (a range iteration is one, a template call five, a
// function call ten), key generations and password hashes costing 50
// (about five seconds of a core), templates (template, include, tpl)
// nested 1000 deep and tpl 100 deep, values of 8 MiB (a string; list
// elements count 8 bytes, map entries 16), 256 MiB of function results
// and kept values in all, 16 MiB of output per template file and 32 MiB
// in all; printf widths are at most 65536, and set and merge refuse to
// make a map contain itself. Arguments that would make a larger value
// (repeat, until, seq, indent, replace, regexReplaceAll, printf widths,
// ...) or print one (toYaml, cat, ...) are refused before anything is
// allocated. Each limit is an ErrBudget error in ErrTemplate naming the
// template and, for loops and recursion, the line of the range or
// template.
//
// # Refused
//
// Each with a *manifest.Error wrapping ErrKustomization that names the
// file, line and field: remote resources, bases, components and files
// (any URL, git reference or github.com path: kustomize would fetch
// them); absolute paths; paths leaving the root (the render root; for a
// templated folder, the folder); files outside their kustomization's
// folder (kustomize's load restrictor RootOnly); helmCharts, helmGlobals and
// HelmChartInflationGenerator (they run helm); generator, transformer and
// validator configurations that are not builtin plugins (exec, Go and
// container plugins) or that carry a KRM function annotation
// (config.kubernetes.io/function); symlinks resolving outside the root
// (directly or through other symlinks), symlink loops where a folder is
// listed, and files that are neither regular files nor folders, where
// they are reached; every file a kustomization reaches of more than
// fsroot.MaxFileSize bytes (before it is read; in a templated folder, any
// file), and YAML kustomize would parse (a resource, patch, CRD or
// configuration file, an inline patch, a kustomization) whose aliases
// expand beyond manifest.MaxAliasNodes nodes or the file beyond
// manifest.MaxNodes, or that holds an alias inside its own anchor
// (kustomize copies every alias: a billion-laughs file would exhaust
// memory), wrapping generators.ErrTooLarge or manifest.ErrTooComplex. Template failures wrap ErrTemplate (and ErrRequired for required) and
// name the template file and line; a rendered YAML file that does not
// parse wraps ErrTemplate and manifest.ErrSyntax.
package kustomize
