package parity

// allowance is an intended difference: wavesmith refuses, by design, a
// variation the reference tool renders.
type allowance struct {
	// reason cites the documented behaviour (README.md, DESIGN.md).
	reason string
	// wavesmithError is a part of wavesmith's error message that shows
	// the refusal is the intended one.
	wavesmithError string
}

// Reasons shared by several entries.
var (
	leavesFolder = allowance{
		reason:         "README (Components): paths leaving the kustomization folder are refused; like component-operator-runtime, wavesmith reads only the Component's folder (generators/kustomize/doc.go), so an overlay that names ../base cannot be rendered",
		wavesmithError: "leaves the component folder",
	}
)

// allowList holds the intended differences by case/variation. An entry
// whose variation renders in wavesmith, or fails otherwise, fails the
// suite, so that it cannot outlive the behaviour it excuses. README.md
// lists the same entries.
var allowList = map[string]allowance{
	"helm/testcharts/alpine/default": {
		reason:         "the chart renders a number as a label value (app.kubernetes.io/version: {{ .Chart.AppVersion }} unquoted); the API server refuses it, and wavesmith refuses what the API server would (DESIGN.md, Trust)",
		wavesmithError: "value must be a string",
	},
	"gatekeeper/chart/pre-delete-hook": {
		reason:         "README (Charts): pre-delete, post-delete and hook-failed hooks are errors, since a GitOps engine deletes objects without running hooks",
		wavesmithError: "pre-delete hooks cannot run",
	},
	"metrics-server/manifests/overlays/release/default":          leavesFolder,
	"metrics-server/manifests/overlays/release-ha-1.21+/default": leavesFolder,
	"descheduler/kubernetes/cronjob/default":                     leavesFolder,
	"gatekeeper/config/default/default":                          leavesFolder,
	"keda/config/default/default":                                leavesFolder,
	"cluster-api/core/config/default/default":                    leavesFolder,
	"argo-cd/manifests/namespace-install/default":                leavesFolder,
	"argo-cd/manifests/cluster-install/default":                  leavesFolder,
}
