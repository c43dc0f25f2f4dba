package argocd_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/lua"
	"github.com/argoproj/argo-cd/v3/util/settings"
	"github.com/argoproj/gitops-engine/pkg/health"
	gocmp "github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"
)

// resourceOverrides reads kustomize/argocd/argocd-cm-patch.yaml as the
// argocd-cm ConfigMap it patches and returns the resource overrides Argo
// CD's settings manager derives from it, as the application controller
// does.
func resourceOverrides(t *testing.T) map[string]v1alpha1.ResourceOverride {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "kustomize", "argocd", "argocd-cm-patch.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(b, &cm); err != nil {
		t.Fatalf("argocd-cm-patch.yaml: %v", err)
	}
	if cm.Name != "argocd-cm" {
		t.Fatalf("argocd-cm-patch.yaml patches %q, not argocd-cm", cm.Name)
	}
	const namespace = "argocd"
	cm.Namespace = namespace
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	mgr := settings.NewSettingsManager(ctx, fake.NewClientset(&cm), namespace)
	overrides, err := mgr.GetResourceOverrides()
	if err != nil {
		t.Fatalf("argocd-cm-patch.yaml: Argo CD refuses the resource customizations: %v", err)
	}
	for _, gk := range []string{"designer.kaoto.io/Kaoto", "wavesmith.io/Component", "argoproj.io/Application"} {
		if overrides[gk].HealthLua == "" {
			t.Fatalf("argocd-cm-patch.yaml: no health check for %s", gk)
		}
	}
	return overrides
}

// object decodes a YAML object the way the controller holds live objects.
func object(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		t.Fatal(err)
	}
	return u
}

// The status wavesmith-status writes (status/kaoto.go, status/component.go):
// Kaoto has status.phase Pending|Progressing|Ready|Error and the conditions
// Deployment, Ingress, Reconcile, Service and Ready (False with the phase as
// reason); Component has status.state Pending|Processing|Ready|Error and
// Ready True (Ready), False (Error) or Unknown (Pending, Processing). Both
// carry status.observedGeneration. Reconciling and Stalled are kstatus's,
// which other writers may add.
const kaotoHead = `apiVersion: designer.kaoto.io/v1alpha1
kind: Kaoto
metadata: {name: designer, namespace: demo, generation: 2}
spec: {ingress: {}}
`

const componentHead = `apiVersion: wavesmith.io/v1alpha1
kind: Component
metadata: {name: shop, namespace: operators, generation: 2}
spec: {source: {kustomization: {path: ../kustomizations/shop}}}
`

func TestHealthKaoto(t *testing.T) {
	overrides := resourceOverrides(t)
	cases := map[string]healthCase{
		"NoStatus": {
			reason: "not yet seen by wavesmith-status",
			want:   health.HealthStatus{Status: health.HealthStatusProgressing, Message: "waiting for wavesmith-status to report"},
		},
		"GenerationBehind": {
			reason: "a status for an older spec, even a ready one",
			status: `
status:
  observedGeneration: 1
  phase: Ready
  conditions:
  - {type: Ready, status: "True", reason: Ready, message: all children are ready, observedGeneration: 1}
`,
			want: health.HealthStatus{Status: health.HealthStatusProgressing, Message: "waiting for wavesmith-status to observe generation 2"},
		},
		"Ready": {
			reason: "every child ready",
			status: `
status:
  observedGeneration: 2
  phase: Ready
  endpoint: http://designer.example.com/
  conditions:
  - {type: Deployment, status: "True", reason: Ready, message: Deployment demo/designer is ready, observedGeneration: 2}
  - {type: Ingress, status: "True", reason: Ready, message: Ingress demo/designer is ready, observedGeneration: 2}
  - {type: Ready, status: "True", reason: Ready, message: all children are ready, observedGeneration: 2}
  - {type: Reconcile, status: "True", reason: Reconciled, message: 3 children observed, observedGeneration: 2}
  - {type: Service, status: "True", reason: Ready, message: Service demo/designer is ready, observedGeneration: 2}
`,
			want: health.HealthStatus{Status: health.HealthStatusHealthy, Message: "all children are ready"},
		},
		"ProgressingChild": {
			reason: "Ready=False for a transitional reason is progress",
			status: `
status:
  observedGeneration: 2
  phase: Progressing
  conditions:
  - {type: Deployment, status: "False", reason: Progressing, message: "Deployment demo/designer: Available: 0/1", observedGeneration: 2}
  - {type: Ready, status: "False", reason: Progressing, message: "Deployment demo/designer: inprogress", observedGeneration: 2}
`,
			want: health.HealthStatus{Status: health.HealthStatusProgressing, Message: "Deployment demo/designer: inprogress"},
		},
		"PendingChild": {
			reason: "a child not applied yet",
			status: `
status:
  observedGeneration: 2
  phase: Pending
  conditions:
  - {type: Ready, status: "False", reason: Pending, message: "Service demo/designer: notfound", observedGeneration: 2}
`,
			want: health.HealthStatus{Status: health.HealthStatusProgressing, Message: "Service demo/designer: notfound"},
		},
		"Error": {
			reason: "Ready=False for a failure",
			status: `
status:
  observedGeneration: 2
  phase: Error
  conditions:
  - {type: Deployment, status: "False", reason: Failed, message: "Deployment demo/designer: Progress deadline exceeded", observedGeneration: 2}
  - {type: Ready, status: "False", reason: Error, message: "Deployment demo/designer: failed", observedGeneration: 2}
`,
			want: health.HealthStatus{Status: health.HealthStatusDegraded, Message: "Deployment demo/designer: failed"},
		},
		"NoReady": {
			reason: "conditions without Ready (e.g. the Kaoto operator's own)",
			status: `
status:
  observedGeneration: 2
  phase: Pending
  conditions:
  - {type: Service, status: "True", reason: Ready, message: ok}
`,
			want: health.HealthStatus{Status: health.HealthStatusProgressing, Message: "no Ready condition yet (Pending)"},
		},
		"StaleReady": {
			reason: "a Ready condition of an older generation",
			status: `
status:
  observedGeneration: 2
  phase: Ready
  conditions:
  - {type: Ready, status: "True", reason: Ready, message: all children are ready, observedGeneration: 1}
`,
			want: health.HealthStatus{Status: health.HealthStatusProgressing, Message: "Ready is for generation 1, not 2"},
		},
		"Reconciling": {
			reason: "Reconciling=True wins over Ready=True",
			status: `
status:
  observedGeneration: 2
  conditions:
  - {type: Ready, status: "True", reason: Ready, message: all children are ready}
  - {type: Reconciling, status: "True", reason: Rollout, message: rolling out generation 2}
`,
			want: health.HealthStatus{Status: health.HealthStatusProgressing, Message: "rolling out generation 2"},
		},
		"Stalled": {
			reason: "Stalled=True is a failure",
			status: `
status:
  observedGeneration: 2
  conditions:
  - {type: Ready, status: "False", reason: Progressing, message: waiting}
  - {type: Stalled, status: "True", reason: InvalidInventory, message: "wavesmith.io/inventory: malformed"}
`,
			want: health.HealthStatus{Status: health.HealthStatusDegraded, Message: "wavesmith.io/inventory: malformed"},
		},
	}
	checkHealth(t, overrides, kaotoHead, cases)
}

func TestHealthComponent(t *testing.T) {
	overrides := resourceOverrides(t)
	cases := map[string]healthCase{
		"NoStatus": {
			reason: "not yet seen by wavesmith-status",
			want:   health.HealthStatus{Status: health.HealthStatusProgressing, Message: "waiting for wavesmith-status to report"},
		},
		"NoObservedGeneration": {
			reason: "a status without observedGeneration",
			status: `
status:
  state: Ready
  conditions:
  - {type: Ready, status: "True", reason: Ready, message: all 3 objects are ready}
`,
			want: health.HealthStatus{Status: health.HealthStatusProgressing, Message: "waiting for wavesmith-status to observe generation 2"},
		},
		"GenerationBehind": {
			reason: "a status for an older spec",
			status: `
status:
  observedGeneration: 1
  state: Ready
  conditions:
  - {type: Ready, status: "True", reason: Ready, message: all 3 objects are ready, observedGeneration: 1}
`,
			want: health.HealthStatus{Status: health.HealthStatusProgressing, Message: "waiting for wavesmith-status to observe generation 2"},
		},
		"Ready": {
			reason: "every object ready",
			status: `
status:
  observedGeneration: 2
  state: Ready
  conditions:
  - {type: Ready, status: "True", reason: Ready, message: all 3 objects are ready, observedGeneration: 2}
  inventory:
  - {group: apps, version: v1, kind: Deployment, namespace: shop-prod, name: prod-shop, status: Current}
`,
			want: health.HealthStatus{Status: health.HealthStatusHealthy, Message: "all 3 objects are ready"},
		},
		"Processing": {
			reason: "Ready=Unknown while objects come up",
			status: `
status:
  observedGeneration: 2
  state: Processing
  conditions:
  - {type: Ready, status: Unknown, reason: Processing, message: "Deployment shop-prod/prod-shop: inprogress", observedGeneration: 2}
`,
			want: health.HealthStatus{Status: health.HealthStatusProgressing, Message: "Deployment shop-prod/prod-shop: inprogress"},
		},
		"Pending": {
			reason: "Ready=Unknown before rendering",
			status: `
status:
  observedGeneration: 2
  state: Pending
  conditions:
  - {type: Ready, status: Unknown, reason: Pending, message: "no wavesmith.io/inventory: render the spec with wavesmith", observedGeneration: 2}
`,
			want: health.HealthStatus{Status: health.HealthStatusProgressing, Message: "no wavesmith.io/inventory: render the spec with wavesmith"},
		},
		"Error": {
			reason: "Ready=False (Error) is a failure",
			status: `
status:
  observedGeneration: 2
  state: Error
  conditions:
  - {type: Ready, status: "False", reason: Error, message: "Job operators/widgets-migrate: failed", observedGeneration: 2}
`,
			want: health.HealthStatus{Status: health.HealthStatusDegraded, Message: "Job operators/widgets-migrate: failed"},
		},
		"ErrorWithoutMessage": {
			reason: "without a message, the reason",
			status: `
status:
  observedGeneration: 2
  state: Error
  conditions:
  - {type: Ready, status: "False", reason: Error}
`,
			want: health.HealthStatus{Status: health.HealthStatusDegraded, Message: "Error"},
		},
		"NoReady": {
			reason: "no Ready condition",
			status: `
status:
  observedGeneration: 2
  state: Processing
`,
			want: health.HealthStatus{Status: health.HealthStatusProgressing, Message: "no Ready condition yet (Processing)"},
		},
		"Reconciling": {
			reason: "Reconciling=True",
			status: `
status:
  observedGeneration: 2
  conditions:
  - {type: Reconciling, status: "True", reason: Progressing, message: applying wave 2}
  - {type: Ready, status: Unknown, reason: Processing, message: ""}
`,
			want: health.HealthStatus{Status: health.HealthStatusProgressing, Message: "applying wave 2"},
		},
		"ReconcilingFalse": {
			reason: "Reconciling=False does not hold back a ready Component",
			status: `
status:
  observedGeneration: 2
  conditions:
  - {type: Reconciling, status: "False", reason: Done}
  - {type: Stalled, status: "False", reason: Done}
  - {type: Ready, status: "True", reason: Ready, message: all 1 objects are ready}
`,
			want: health.HealthStatus{Status: health.HealthStatusHealthy, Message: "all 1 objects are ready"},
		},
		"Stalled": {
			reason: "Stalled=True",
			status: `
status:
  observedGeneration: 2
  conditions:
  - {type: Stalled, status: "True", reason: Timeout, message: gave up after 10m}
  - {type: Ready, status: Unknown, reason: Processing}
`,
			want: health.HealthStatus{Status: health.HealthStatusDegraded, Message: "gave up after 10m"},
		},
	}
	checkHealth(t, overrides, componentHead, cases)
}

func TestHealthApplication(t *testing.T) {
	overrides := resourceOverrides(t)
	const head = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: child, namespace: argocd}
spec:
  project: default
  destination: {server: "https://kubernetes.default.svc", namespace: shop}
  source: {repoURL: "https://git.example.com/apps.git", path: shop, plugin: {name: wavesmith}}
`
	cases := map[string]healthCase{
		"NoStatus": {
			reason: "a child Application not yet reconciled",
			want:   health.HealthStatus{Status: health.HealthStatusProgressing},
		},
		"Healthy": {
			reason: "the child's own health",
			status: "status: {health: {status: Healthy}}\n",
			want:   health.HealthStatus{Status: health.HealthStatusHealthy},
		},
		"Progressing": {
			reason: "a child still syncing holds the parent's wave",
			status: "status: {health: {status: Progressing}}\n",
			want:   health.HealthStatus{Status: health.HealthStatusProgressing},
		},
		"Degraded": {
			reason: "with the message, when there is one",
			status: "status: {health: {status: Degraded, message: Kaoto demo/designer is Degraded}}\n",
			want:   health.HealthStatus{Status: health.HealthStatusDegraded, Message: "Kaoto demo/designer is Degraded"},
		},
		"Missing": {
			reason: "a child whose resources are missing",
			status: "status: {health: {status: Missing}}\n",
			want:   health.HealthStatus{Status: health.HealthStatusMissing},
		},
	}
	checkHealth(t, overrides, head, cases)
}

// TestHealthNeedsOverrides shows why argocd-cm-patch.yaml exists: without
// it Argo CD has no health for Kaoto and Component at all.
func TestHealthNeedsOverrides(t *testing.T) {
	for _, s := range []string{kaotoHead, componentHead} {
		got, err := health.GetResourceHealth(object(t, s), lua.ResourceHealthOverrides(nil))
		if err != nil || got != nil {
			t.Errorf("without overrides: health %v, err %v; want none", got, err)
		}
	}
}

// healthCase is the status part of an object and the health Argo CD's Lua
// evaluation must give it.
type healthCase struct {
	reason string
	status string
	want   health.HealthStatus
}

// checkHealth evaluates each case (head + status) with the overrides.
func checkHealth(t *testing.T, overrides map[string]v1alpha1.ResourceOverride, head string, cases map[string]healthCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := health.GetResourceHealth(object(t, head+tc.status), lua.ResourceHealthOverrides(overrides))
			if err != nil {
				t.Fatalf("%s: %v", tc.reason, err)
			}
			if got == nil {
				t.Fatalf("%s: no health", tc.reason)
			}
			if diff := gocmp.Diff(tc.want, *got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
