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
// A chart of a Helm repository (spec.source.chart repo, name, version) is
// read from the lock (LockFile, at the root) and the content-addressed
// cache (CacheDir) only; Fetch, behind `wavesmith fetch`, fills both with
// Helm's HTTP getter and credentials, downloads capped, digests checked,
// archives expanded in memory with every entry checked (remote.go,
// fetch.go).
//
// Before Helm's loader reads a chart folder, the sizes of its files are
// summed: a chart holds at most 100 MiB, subcharts included (size.go).
//
// Before Helm's engine runs, a probe rehearses the templates with every
// function wrapped (probe.go): hostile charts fail with ErrBudget before
// they allocate too much or generate too many keys (component.FuncCost), rendering stops at the context's deadline, and
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
