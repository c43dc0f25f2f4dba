package status

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	kstatus "github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	designerv1alpha1 "github.com/wavesmith/wavesmith/api/designer/v1alpha1"
	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/internal/golden"
)

// healthDir holds Kaoto and Component objects with the status this
// package computes, in every phase. test/argocd runs Argo CD's Lua health
// checks (kustomize/argocd/argocd-cm-patch.yaml) on them; here kstatus
// (Flux's health) reads them. Rewrite with go test -run TestHealthFixtures
// -update ./internal/status/ and read what changed.
const healthDir = "testdata/health"

// fixtureTime is every condition's lastTransitionTime.
var fixtureTime = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))

// fixture is one object for testdata/health and what kstatus must say of
// it (from kstatus's rules: observedGeneration behind or Reconciling=True
// is InProgress, Stalled=True is Failed, else Ready decides).
type fixture struct {
	reason  string
	obj     runtime.Object
	kstatus kstatus.Status
}

// observe builds an observed child from an object, with this package's
// health as the controller computes it; a nil object is a child not found.
func observe(e inventory.Entry, obj *unstructured.Unstructured) observed {
	h, msg := childHealth(e, obj)
	return observed{Entry: e, Object: obj, Health: h, Message: msg}
}

func newObject(apiVersion, kind, ns, name string, body map[string]any) *unstructured.Unstructured {
	o := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name, "namespace": ns, "generation": int64(1)}}
	for k, v := range body {
		o[k] = v
	}
	return u(o)
}

func deploymentObj(ns, name string, available bool) *unstructured.Unstructured {
	st := map[string]any{"observedGeneration": int64(1), "replicas": int64(1), "updatedReplicas": int64(1), "unavailableReplicas": int64(1),
		"conditions": []any{map[string]any{"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated"}}}
	if available {
		st = map[string]any{"observedGeneration": int64(1), "replicas": int64(1), "updatedReplicas": int64(1), "readyReplicas": int64(1), "availableReplicas": int64(1),
			"conditions": []any{map[string]any{"type": "Available", "status": "True"}, map[string]any{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}}}
	}
	return newObject("apps/v1", "Deployment", ns, name, map[string]any{"spec": map[string]any{"replicas": int64(1)}, "status": st})
}

func jobObj(ns, name, condition string) *unstructured.Unstructured {
	st := map[string]any{"active": int64(1)}
	switch condition {
	case "Complete":
		st = map[string]any{"succeeded": int64(1), "conditions": []any{map[string]any{"type": "Complete", "status": "True"}}}
	case "Failed":
		st = map[string]any{"failed": int64(3), "conditions": []any{map[string]any{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"}}}
	}
	return newObject("batch/v1", "Job", ns, name, map[string]any{"spec": map[string]any{"completions": int64(1)}, "status": st})
}

func healthFixtures(t *testing.T) map[string]fixture {
	t.Helper()
	// Kaoto demo/designer with spec.ingress, rendered for Kubernetes and
	// for OpenShift.
	entry := func(g, k string) inventory.Entry {
		return inventory.Entry{Group: g, Version: "v1", Kind: k, Namespace: "demo", Name: "designer"}
	}
	svcE, ingE, depE, rtE := entry("", "Service"), entry("networking.k8s.io", "Ingress"), entry("apps", "Deployment"), entry("route.openshift.io", "Route")
	svc := newObject("v1", "Service", "demo", "designer", map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"name": "http", "port": int64(8080)}}}})
	ing := newObject("networking.k8s.io/v1", "Ingress", "demo", "designer", map[string]any{"spec": map[string]any{"rules": []any{
		map[string]any{"host": "designer.example.com", "http": map[string]any{"paths": []any{map[string]any{"path": "/designer(/|$)(.*)"}}}}}}})
	route := func(path, admitted string) *unstructured.Unstructured {
		r := routeObj(path, "designer-demo.apps.cluster.example", admitted)
		r.SetName("designer")
		return r
	}
	kaoto := func(gen int64, children []observed, invErr error) *designerv1alpha1.Kaoto {
		k := &designerv1alpha1.Kaoto{
			TypeMeta:   metav1.TypeMeta{APIVersion: designerv1alpha1.APIVersion, Kind: designerv1alpha1.Kind},
			ObjectMeta: metav1.ObjectMeta{Name: "designer", Namespace: "demo", Generation: gen},
			Spec:       designerv1alpha1.KaotoSpec{Ingress: &designerv1alpha1.IngressSpec{}},
		}
		k.Status = kaotoStatus(k, children, invErr, fixtureTime)
		return k
	}
	ready := []observed{observe(svcE, svc), observe(ingE, ing), observe(depE, deploymentObj("demo", "designer", true))}
	oldGen := kaoto(1, ready, nil)
	oldGen.Generation = 2 // the spec changed; wavesmith-status has not seen it yet
	_, invErr := inventory.Parse("apps/v1/Deployment/demo/designer replicas=1")

	// Component operators/shop: a chart with a ConfigMap, a Deployment, a
	// Secret, a pre-install hook deleted on success and a post-install hook.
	centry := func(g, k, name string) inventory.Entry {
		return inventory.Entry{Group: g, Version: "v1", Kind: k, Namespace: "shop", Name: name}
	}
	zero := 0
	cmE, webE, secretE := centry("", "ConfigMap", "settings"), centry("apps", "Deployment", "web"), centry("", "Secret", "creds")
	preE, postE := centry("batch", "Job", "migrate"), centry("batch", "Job", "smoke")
	preE.Hook, preE.PurgeOrder = inventory.HookPreInstall, &zero
	postE.Hook = inventory.HookPostInstall
	cm := newObject("v1", "ConfigMap", "shop", "settings", nil)
	secret := observed{Entry: secretE, Health: Unknown, Message: "Secrets are not read"}
	component := func(gen int64, children []observed) *v1alpha1.Component {
		c := &v1alpha1.Component{
			TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.ComponentKind},
			ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "operators", Generation: gen},
			Spec:       v1alpha1.ComponentSpec{Source: v1alpha1.Source{Chart: &v1alpha1.PathSource{Path: "charts/shop"}}},
		}
		c.Status = componentStatus(c, children, nil, fixtureTime)
		return c
	}
	cReady := []observed{observe(cmE, cm), observe(webE, deploymentObj("shop", "web", true)), secret, observe(preE, jobObj("shop", "migrate", "Complete")), observe(postE, jobObj("shop", "smoke", "Complete"))}
	cOld := component(1, cReady)
	cOld.Generation = 2

	return map[string]fixture{
		"kaoto-pending.yaml": {"children not applied yet",
			kaoto(2, []observed{observe(svcE, nil), observe(ingE, nil), observe(depE, nil)}, nil), kstatus.InProgressStatus},
		"kaoto-progressing.yaml": {"the Deployment is not available yet",
			kaoto(2, []observed{observe(svcE, svc), observe(ingE, ing), observe(depE, deploymentObj("demo", "designer", false))}, nil), kstatus.InProgressStatus},
		"kaoto-ready.yaml": {"every child ready",
			kaoto(2, ready, nil), kstatus.CurrentStatus},
		"kaoto-error-stalled.yaml": {"the Deployment is past its progress deadline",
			kaoto(2, []observed{observe(svcE, svc), observe(ingE, ing), observe(depE, progressDeadlineExceeded())}, nil), kstatus.FailedStatus},
		"kaoto-old-generation.yaml": {"a ready status of the previous generation",
			oldGen, kstatus.InProgressStatus},
		"kaoto-invalid-inventory.yaml": {"an inventory line this release does not read",
			kaoto(2, nil, invErr), kstatus.FailedStatus},
		"kaoto-route-waiting.yaml": {"OpenShift: no router admitted the Route yet",
			kaoto(2, []observed{observe(svcE, svc), observe(rtE, route("/", "")), observe(depE, deploymentObj("demo", "designer", true))}, nil), kstatus.InProgressStatus},
		"kaoto-route-ready.yaml": {"OpenShift: the Route admitted",
			kaoto(2, []observed{observe(svcE, svc), observe(rtE, route("/", "True")), observe(depE, deploymentObj("demo", "designer", true))}, nil), kstatus.CurrentStatus},
		"kaoto-route-rejected.yaml": {"OpenShift: the router rejected the Route's host",
			kaoto(2, []observed{observe(svcE, svc), observe(rtE, route("/", "False")), observe(depE, deploymentObj("demo", "designer", true))}, nil), kstatus.FailedStatus},
		"kaoto-route-regex-path.yaml": {"OpenShift: the Ingress regex in the Route path",
			kaoto(2, []observed{observe(svcE, svc), observe(rtE, route("/bar(/|$)(.*)", "True")), observe(depE, deploymentObj("demo", "designer", true))}, nil), kstatus.FailedStatus},

		"component-not-rendered.yaml": {"no inventory: applied without rendering",
			component(2, nil), kstatus.InProgressStatus},
		"component-pending.yaml": {"objects not applied yet",
			component(2, []observed{observe(cmE, nil), observe(webE, nil), secret, observe(preE, nil), observe(postE, nil)}), kstatus.InProgressStatus},
		"component-processing.yaml": {"the pre-install hook runs, the Deployment comes up",
			component(2, []observed{observe(cmE, cm), observe(webE, deploymentObj("shop", "web", false)), secret, observe(preE, jobObj("shop", "migrate", "")), observe(postE, nil)}), kstatus.InProgressStatus},
		"component-ready.yaml": {"every object ready, both hooks complete",
			component(2, cReady), kstatus.CurrentStatus},
		"component-hook-absent.yaml": {"the pre-install hook deleted on success, the post-install hook not created yet",
			component(2, []observed{observe(cmE, cm), observe(webE, deploymentObj("shop", "web", true)), secret, observe(preE, nil), observe(postE, nil)}), kstatus.CurrentStatus},
		"component-error-stalled.yaml": {"the post-install hook failed",
			component(2, []observed{observe(cmE, cm), observe(webE, deploymentObj("shop", "web", true)), secret, observe(preE, nil), observe(postE, jobObj("shop", "smoke", "Failed"))}), kstatus.FailedStatus},
		"component-old-generation.yaml": {"a ready status of the previous generation",
			cOld, kstatus.InProgressStatus},
	}
}

// TestHealthFixtures writes (-update) and checks testdata/health: each
// file is what kaotoStatus or componentStatus computes, and kstatus reads
// it as stated. A file no case writes fails the test.
func TestHealthFixtures(t *testing.T) {
	fixtures := healthFixtures(t)
	for name, f := range fixtures {
		t.Run(strings.TrimSuffix(name, ".yaml"), func(t *testing.T) {
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(f.obj)
			if err != nil {
				t.Fatal(err)
			}
			unstructured.RemoveNestedField(m, "metadata", "creationTimestamp")
			res, err := kstatus.Compute(u(m))
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != f.kstatus {
				t.Errorf("%s: kstatus %s (%s), want %s", f.reason, res.Status, res.Message, f.kstatus)
			}
			b, err := yaml.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, filepath.Join(healthDir, name), append([]byte("# "+f.reason+"\n"), b...))
		})
	}
	entries, err := os.ReadDir(healthDir)
	if err != nil {
		t.Fatal(err)
	}
	var extra []string
	for _, e := range entries {
		if _, ok := fixtures[e.Name()]; !ok {
			extra = append(extra, e.Name())
		}
	}
	sort.Strings(extra)
	if diff := cmp.Diff([]string(nil), extra); diff != "" {
		t.Errorf("%s holds files no fixture writes (delete them): %s", healthDir, diff)
	}
}
