package argocd_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
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

// fixtureDir holds Kaoto and Component objects whose status wavesmith-status
// computed (internal/status/fixtures_test.go writes them with its real status
// functions: go test -run TestHealthFixtures -update ./internal/status/).
var fixtureDir = filepath.Join(repoRoot, "internal", "status", "testdata", "health")

// TestHealthFixtures runs the Lua checks on every status wavesmith-status
// writes. The health each must give is Argo CD's meaning, stated here:
// Healthy only when Ready is True for the current generation; Progressing
// while the status is behind the spec or children come up (Reconciling);
// Degraded on a failure (Stalled), with the controller's message, so that
// a sync wave or an Application stops waiting at once. A changed reason or
// message in internal/status/ breaks this test; a fixture without an expectation,
// or an expectation without a fixture, too.
func TestHealthFixtures(t *testing.T) {
	overrides := resourceOverrides(t)
	const (
		deadline = "Deployment demo/designer: failed: Progress deadline exceeded"
		rejected = `Route demo/designer: failed: not admitted: router "default" rejected host "designer-demo.apps.cluster.example": HostAlreadyClaimed: route k4 already exposes designer-demo.apps.cluster.example and is older`
		regex    = `Route demo/designer path "/bar(/|$)(.*)" carries the Ingress regex (/|$)(.*), which a Route matches literally: no URL serves the designer through it; set spec.ingress.path without (/|$)(.*)`
		badInv   = `inventory entry "apps/v1/Deployment/demo/designer replicas=1": attribute "replicas": want hook= or purge-order=: unknown inventory attribute`
	)
	want := map[string]health.HealthStatus{
		"kaoto-pending.yaml":           {Status: health.HealthStatusProgressing, Message: "Service demo/designer: notfound; Ingress demo/designer: notfound; Deployment demo/designer: notfound"},
		"kaoto-progressing.yaml":       {Status: health.HealthStatusProgressing, Message: "Deployment demo/designer: inprogress"},
		"kaoto-ready.yaml":             {Status: health.HealthStatusHealthy, Message: "all children are ready"},
		"kaoto-error-stalled.yaml":     {Status: health.HealthStatusDegraded, Message: deadline},
		"kaoto-old-generation.yaml":    {Status: health.HealthStatusProgressing, Message: "waiting for wavesmith-status to observe generation 2"},
		"kaoto-invalid-inventory.yaml": {Status: health.HealthStatusDegraded, Message: badInv},
		"kaoto-route-waiting.yaml":     {Status: health.HealthStatusProgressing, Message: "Route demo/designer: inprogress"},
		"kaoto-route-ready.yaml":       {Status: health.HealthStatusHealthy, Message: "all children are ready"},
		"kaoto-route-rejected.yaml":    {Status: health.HealthStatusDegraded, Message: rejected},
		"kaoto-route-regex-path.yaml":  {Status: health.HealthStatusDegraded, Message: regex},

		"component-not-rendered.yaml":   {Status: health.HealthStatusProgressing, Message: "no wavesmith.io/inventory: render the spec with wavesmith"},
		"component-pending.yaml":        {Status: health.HealthStatusProgressing, Message: "ConfigMap shop/settings: notfound; Deployment shop/web: notfound; Job shop/migrate: notfound; Job shop/smoke: notfound"},
		"component-processing.yaml":     {Status: health.HealthStatusProgressing, Message: "Deployment shop/web: inprogress; Job shop/migrate: inprogress; Job shop/smoke: notfound"},
		"component-ready.yaml":          {Status: health.HealthStatusHealthy, Message: "all 5 objects are ready"},
		"component-hook-absent.yaml":    {Status: health.HealthStatusHealthy, Message: "all 3 objects are ready; absent, as hooks or objects with a purge order may be: Job shop/migrate, Job shop/smoke"},
		"component-error-stalled.yaml":  {Status: health.HealthStatusDegraded, Message: "Job shop/smoke: failed: hook Job failed: BackoffLimitExceeded: Job has reached the specified backoff limit"},
		"component-old-generation.yaml": {Status: health.HealthStatusProgressing, Message: "waiting for wavesmith-status to observe generation 2"},
	}
	entries, err := os.ReadDir(fixtureDir)
	if err != nil {
		t.Fatalf("%v: run go test -run TestHealthFixtures -update ./internal/status/ in the repository root", err)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		seen[name] = true
		t.Run(strings.TrimSuffix(name, ".yaml"), func(t *testing.T) {
			w, ok := want[name]
			if !ok {
				t.Fatalf("%s: no expected Argo CD health: add one to this test", name)
			}
			b, err := os.ReadFile(filepath.Join(fixtureDir, name))
			if err != nil {
				t.Fatal(err)
			}
			got, err := health.GetResourceHealth(object(t, string(b)), lua.ResourceHealthOverrides(overrides))
			if err != nil {
				t.Fatal(err)
			}
			if got == nil {
				t.Fatal("no health")
			}
			if diff := gocmp.Diff(w, *got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", name, diff)
			}
		})
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("%s: expected in %s, not there", name, fixtureDir)
		}
	}
}

// TestHealthKaoto covers what wavesmith-status did not write: no status
// yet, and the Kaoto operator's own status (kaoto-operator.md §2.5: phase
// Ready, no Ready condition), which must not pass for ready.
func TestHealthKaoto(t *testing.T) {
	overrides := resourceOverrides(t)
	cases := map[string]healthCase{
		"NoStatus": {
			reason: "not yet seen by wavesmith-status",
			want:   health.HealthStatus{Status: health.HealthStatusProgressing, Message: "waiting for wavesmith-status to report"},
		},
		"OperatorStatus": {
			reason: "the Kaoto operator's status: its Ready phase only means its apply calls succeeded",
			status: `
status:
  observedGeneration: 2
  phase: Ready
  conditions:
  - {type: Deployment, status: "True", reason: Deployed, message: Deployed, observedGeneration: 2}
  - {type: Ingress, status: "True", reason: Deployed, message: Deployed, observedGeneration: 2}
  - {type: Reconcile, status: "True", reason: Reconciled, message: Reconciled, observedGeneration: 2}
  - {type: Service, status: "True", reason: Deployed, message: Deployed, observedGeneration: 2}
`,
			want: health.HealthStatus{Status: health.HealthStatusProgressing, Message: "no Ready condition yet (Ready)"},
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
