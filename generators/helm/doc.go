// Package helm renders a Component whose source is a Helm chart exactly as
// helm template does: it runs the steps of Helm's install action in
// client-only dry-run mode with Helm's own functions (chart loading,
// dependency processing with condition, tags, alias and import-values,
// values coalescing and schema validation, the template engine, NOTES and
// manifest splitting), and translates hooks into waves (offsets from the
// Component's wave: generators.Result.Offsets) and policies as
// component-operator-runtime does, marking each kept hook with the native
// wavesmith.io/hook (install and delete hooks); hooks no GitOps engine
// runs (test, rollback, upgrade-only) and the hook-failed delete policy are
// left out with one warning per chart, or refused with spec.strictHooks.
//
// A chart of a Helm repository or OCI registry (spec.source.chart repo,
// name, version; for OCI also a manifest digest, sha256:<hex> or
// TAG@sha256:<hex>) is read from the lock (LockFile, at the root) and the
// content-addressed cache (CacheDir, opened as its own fsroot.Root: regular
// files, no symlink out) only; Fetch, behind `wavesmith fetch`, fills
// both with Helm's HTTP getter, registry client and credentials,
// downloads capped, digests checked, archives expanded in memory with
// every entry checked (remote.go, fetch.go, oci.go). Under a context from
// FetchOnMiss (the Argo CD plugin's door) a chart the lock names and the
// cache lacks is fetched exactly as locked; a chart the lock lacks never
// is. Chart.yaml dependencies by path (file://) are taken from chart
// folders inside the root, checked as the chart folder is (deps.go).
//
// Before Helm's loader reads a chart folder, the sizes of its files are
// summed: a chart holds at most 100 MiB, subcharts included (size.go).
//
// Before Helm's engine runs, a probe rehearses the templates in the
// template sandbox (internal/tmplsandbox, the one kustomize's templating
// uses, with the same limits: probe.go): hostile charts fail with
// ErrBudget before they allocate too much, loop or recurse too long, or
// generate too many keys, rendering stops at the context's deadline, and
// templates calling functions whose result changes on every render are
// reported as warnings when the probe's output (its clock moved a year, a
// month, a day and more) differs from Helm's, naming the object and
// field. tpl may nest 100 deep (Helm sets no bound: a value calling tpl
// on itself would recurse until memory ran out).
//
// A values.schema.json (the chart's or a subchart's) may refer only
// within itself ("#..."): Helm's schema compiler would fetch a $ref,
// $dynamicRef or $recursiveRef naming a URL, read one naming a file, and
// fetch a $schema that is not an embedded JSON Schema draft, so such a
// schema is refused before Helm validates anything.
//
// Inline spec.values are read from the spec's text as Helm reads values
// files (YAML 1.1, see manifest.Object.YAML11), and charts see
// DefaultKubeVersion unless a kube version is given.
package helm
