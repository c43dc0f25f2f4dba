package parity

// allowance is an intended difference: wavesmith refuses, by design, a
// variation the reference tool renders.
type allowance struct {
	// reason cites the documented behaviour (README.md, docs/design.md).
	reason string
	// wavesmithError is a part of wavesmith's error message that shows
	// the refusal is the intended one.
	wavesmithError string
}

// fluxVariables: Flux's post-build substitution inputs.
var fluxVariables = allowance{
	reason:         "the kustomization holds ${var} placeholders in label values, which kustomize-controller substitutes after kustomize build (postBuild.substitute); wavesmith renders before Flux and refuses label values the API server would refuse (docs/security.md). Substitute before rendering, or keep such folders as Flux Kustomizations of their own",
	wavesmithError: `refused by the API server's rules: Invalid value: "${cluster_`,
}

// allowList holds the intended differences by case/variation. An entry
// whose variation renders in wavesmith, or fails otherwise, fails the
// suite, so that it cannot outlive the behaviour it excuses. README.md
// lists the same entries.
var allowList = map[string]allowance{
	"helm/testcharts/alpine/default": {
		reason:         "the chart renders a number as a label value (app.kubernetes.io/version: {{ .Chart.AppVersion }} unquoted); the API server refuses it, and wavesmith refuses what the API server would (docs/design.md, Trust)",
		wavesmithError: "value must be a string",
	},
	"flux2/build-kustomization/var-substitution/default": fluxVariables,
	"flux-pkg/kustomize/resources/default":               fluxVariables,
	"helm/chartutil/subpop/default": {
		reason:         "Helm's own test chart ships a CRD named testCRDs; the API server refuses upper case in names, and wavesmith refuses what the API server would (docs/design.md, Trust)",
		wavesmithError: `"testCRDs"; a lowercase RFC 1123 subdomain`,
	},
	"helm/chartutil/subpop/alias-enabled": {
		reason:         "the same CRD named testCRDs (subpop/default)",
		wavesmithError: `"testCRDs"; a lowercase RFC 1123 subdomain`,
	},
	"helm/chartutil/subpop/tag-reenables-parent": {
		reason:         "the same CRD named testCRDs (subpop/default)",
		wavesmithError: `"testCRDs"; a lowercase RFC 1123 subdomain`,
	},
}
