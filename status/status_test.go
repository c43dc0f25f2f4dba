package status

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	designerv1alpha1 "github.com/wavesmith/wavesmith/api/designer/v1alpha1"
	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/api/v1alpha1"
)

func u(m map[string]any) *unstructured.Unstructured { return &unstructured.Unstructured{Object: m} }

func TestEndpoint(t *testing.T) {
	svc := u(map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "k", "namespace": "demo"},
		"spec": map[string]any{"ports": []any{map[string]any{"port": int64(8080)}}}})
	ingress := func(host, path string, lb map[string]any, tls bool) *unstructured.Unstructured {
		spec := map[string]any{"rules": []any{map[string]any{"host": host, "http": map[string]any{"paths": []any{map[string]any{"path": path}}}}}}
		if tls {
			spec["tls"] = []any{map[string]any{"hosts": []any{host}}}
		}
		o := map[string]any{"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "spec": spec}
		if lb != nil {
			o["status"] = map[string]any{"loadBalancer": map[string]any{"ingress": []any{lb}}}
		}
		return u(o)
	}
	route := func(admitted string, path string) *unstructured.Unstructured {
		o := map[string]any{"apiVersion": "route.openshift.io/v1", "kind": "Route", "spec": map[string]any{"path": path, "tls": map[string]any{"termination": "edge"}}}
		if admitted != "" {
			o["status"] = map[string]any{"ingress": []any{map[string]any{"host": admitted}}}
		}
		return u(o)
	}
	cases := map[string]struct {
		reason              string
		svc, ingress, route *unstructured.Unstructured
		want                string
	}{
		"ServiceOnly":      {"no Ingress: the in-cluster URL, with its port", svc, nil, nil, "http://k.demo.svc.cluster.local:8080/"},
		"IngressHostPath":  {"the Ingress host and path, without the rewrite regex", svc, ingress("kaoto.example.com", "/designer(/|$)(.*)", nil, false), nil, "http://kaoto.example.com/designer/"},
		"IngressTLS":       {"https when a TLS entry covers the host", svc, ingress("kaoto.example.com", "/designer(/|$)(.*)", nil, true), nil, "https://kaoto.example.com/designer/"},
		"IngressLBIP":      {"no host: the load-balancer IP with the path", svc, ingress("", "/k2(/|$)(.*)", map[string]any{"ip": "192.168.49.2"}, false), nil, "http://192.168.49.2/k2/"},
		"IngressLBName":    {"the load-balancer hostname wins over its IP", svc, ingress("", "/k2(/|$)(.*)", map[string]any{"hostname": "lb.example.net", "ip": "1.2.3.4"}, false), nil, "http://lb.example.net/k2/"},
		"IngressNoLB":      {"no host and no address yet: the Service", svc, ingress("", "/k2(/|$)(.*)", nil, false), nil, "http://k.demo.svc.cluster.local:8080/"},
		"Route":            {"an admitted Route: https, its host and path", svc, nil, route("kaoto.example.com", "/designer"), "https://kaoto.example.com/designer/"},
		"RouteRoot":        {"a Route at /", svc, nil, route("k2-demo.apps.example.com", "/"), "https://k2-demo.apps.example.com/"},
		"RouteNotAdmitted": {"a Route not admitted yet: the Service", svc, nil, route("", "/"), "http://k.demo.svc.cluster.local:8080/"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Endpoint(tc.svc, tc.ingress, tc.route); got != tc.want {
				t.Errorf("%s: Endpoint() = %q, want %q", tc.reason, got, tc.want)
			}
		})
	}
}

func TestHealth(t *testing.T) {
	deployment := func(available bool, hints string) *unstructured.Unstructured {
		o := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "d", "generation": int64(1)},
			"spec": map[string]any{"replicas": int64(1)}}
		if hints != "" {
			o["metadata"].(map[string]any)["annotations"] = map[string]any{inventory.StatusHint: hints}
		}
		if available {
			o["status"] = map[string]any{"observedGeneration": int64(1), "replicas": int64(1), "updatedReplicas": int64(1), "readyReplicas": int64(1), "availableReplicas": int64(1),
				"conditions": []any{map[string]any{"type": "Available", "status": "True"}, map[string]any{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}}}
		}
		return u(o)
	}
	cr := func(status map[string]any, hints string) *unstructured.Unstructured {
		o := map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w", "generation": int64(1), "annotations": map[string]any{inventory.StatusHint: hints}}}
		if status != nil {
			o["status"] = status
		}
		return u(o)
	}
	cases := map[string]struct {
		reason string
		obj    *unstructured.Unstructured
		want   string
	}{
		"Missing":          {"a missing child", nil, NotFound},
		"NotAvailable":     {"a Deployment without status is in progress", deployment(false, ""), InProgress},
		"Available":        {"an available Deployment is current", deployment(true, ""), Current},
		"NoConditions":     {"kstatus: a custom resource without conditions is current", cr(nil, ""), Current},
		"ObservedGenHint":  {"has-observed-generation: no observedGeneration yet", cr(nil, "has-observed-generation"), InProgress},
		"ObservedGenOK":    {"has-observed-generation: observed", cr(map[string]any{"observedGeneration": int64(1)}, "has-observed-generation"), Current},
		"ReadyHint":        {"has-ready-condition: no Ready yet", cr(map[string]any{}, "has-ready-condition"), InProgress},
		"ReadyFalse":       {"kstatus: Ready False is in progress", cr(map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "False"}}}, ""), InProgress},
		"ConditionsHint":   {"conditions=A;B: B not True", cr(map[string]any{"conditions": []any{map[string]any{"type": "A", "status": "True"}, map[string]any{"type": "B", "status": "False"}}}, "conditions=A;B"), InProgress},
		"ConditionsHintOK": {"conditions=A;B: both True", cr(map[string]any{"conditions": []any{map[string]any{"type": "A", "status": "True"}, map[string]any{"type": "B", "status": "True"}}}, "conditions=A;B"), Current},
		"Stalled":          {"kstatus: Stalled True is failed", cr(map[string]any{"conditions": []any{map[string]any{"type": "Stalled", "status": "True", "reason": "X"}}}, ""), Failed},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got, msg := Health(tc.obj); got != tc.want {
				t.Errorf("%s: Health() = %s (%s), want %s", tc.reason, got, msg, tc.want)
			}
		})
	}
}

func TestKaotoStatus(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	later := metav1.NewTime(now.Add(time.Hour))
	e := func(g, v, k string) inventory.Entry {
		return inventory.Entry{Group: g, Version: v, Kind: k, Namespace: "demo", Name: "k"}
	}
	svc, ing, dep := e("", "v1", "Service"), e("networking.k8s.io", "v1", "Ingress"), e("apps", "v1", "Deployment")
	k := &designerv1alpha1.Kaoto{ObjectMeta: metav1.ObjectMeta{Name: "k", Namespace: "demo", Generation: 3}, Spec: designerv1alpha1.KaotoSpec{Ingress: &designerv1alpha1.IngressSpec{}}}
	type row struct {
		Phase string
		Conds map[string]string
	}
	summarize := func(st designerv1alpha1.KaotoStatus) row {
		r := row{Phase: st.Phase, Conds: map[string]string{}}
		for _, c := range st.Conditions {
			r.Conds[c.Type] = string(c.Status) + "/" + c.Reason
			if c.ObservedGeneration != 3 {
				t.Errorf("condition %s observedGeneration %d, want 3", c.Type, c.ObservedGeneration)
			}
		}
		return r
	}
	cases := map[string]struct {
		reason   string
		children []observed
		invErr   error
		want     row
	}{
		"Missing": {"children missing: Pending",
			[]observed{{Entry: svc, Health: NotFound}, {Entry: ing, Health: NotFound}, {Entry: dep, Health: NotFound}}, nil,
			row{PhasePending, map[string]string{"Service": "False/NotFound", "Ingress": "False/NotFound", "Deployment": "False/NotFound", "Reconcile": "True/Reconciled", "Ready": "False/Pending"}}},
		"Progressing": {"Deployment not available: Progressing",
			[]observed{{Entry: svc, Health: Current}, {Entry: ing, Health: Current}, {Entry: dep, Health: InProgress, Message: "Available: 0/1"}}, nil,
			row{PhaseProgressing, map[string]string{"Service": "True/Ready", "Ingress": "True/Ready", "Deployment": "False/Progressing", "Reconcile": "True/Reconciled", "Ready": "False/Progressing"}}},
		"Ready": {"all current: Ready",
			[]observed{{Entry: svc, Health: Current}, {Entry: ing, Health: Current}, {Entry: dep, Health: Current}}, nil,
			row{PhaseReady, map[string]string{"Service": "True/Ready", "Ingress": "True/Ready", "Deployment": "True/Ready", "Reconcile": "True/Reconciled", "Ready": "True/Ready"}}},
		"Failed": {"a failed child: Error",
			[]observed{{Entry: svc, Health: Current}, {Entry: ing, Health: Current}, {Entry: dep, Health: Failed, Message: "x"}}, nil,
			row{PhaseError, map[string]string{"Service": "True/Ready", "Ingress": "True/Ready", "Deployment": "False/Failed", "Reconcile": "True/Reconciled", "Ready": "False/Error"}}},
		"BadInventory": {"an unreadable inventory: Error",
			nil, errors.New("inventory entry \"x\": want group/version/Kind/namespace/name"),
			row{PhaseError, map[string]string{"Reconcile": "False/InvalidInventory", "Ready": "False/Error"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st := kaotoStatus(k, tc.children, tc.invErr, now)
			if diff := cmp.Diff(tc.want, summarize(st)); diff != "" {
				t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
			}
			// The same observation later changes nothing: no timestamp moves.
			again := k.DeepCopy()
			again.Status = st
			if diff := cmp.Diff(st, kaotoStatus(again, tc.children, tc.invErr, later)); diff != "" {
				t.Errorf("%s: a second computation with nothing changed differs: %s", tc.reason, diff)
			}
		})
	}
}

func TestComponentStatus(t *testing.T) {
	now := metav1.Now()
	c := &v1alpha1.Component{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
	e := inventory.Entry{Version: "v1", Kind: "ConfigMap", Namespace: "n", Name: "a"}
	cases := map[string]struct {
		health, state, ready, reason string
	}{
		"Ready":      {Current, StateReady, "True", "Ready"},
		"Processing": {InProgress, StateProcessing, "Unknown", "Processing"},
		"Pending":    {NotFound, StatePending, "Unknown", "Pending"},
		"Error":      {Failed, StateError, "False", "Error"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st := componentStatus(c, []observed{{Entry: e, Health: tc.health}}, nil, now)
			if st.State != tc.state || string(st.Conditions[0].Status) != tc.ready || st.Conditions[0].Reason != tc.reason {
				t.Errorf("state %s, Ready %s/%s; want %s, %s/%s", st.State, st.Conditions[0].Status, st.Conditions[0].Reason, tc.state, tc.ready, tc.reason)
			}
			want := []v1alpha1.InventoryItem{{Version: "v1", Kind: "ConfigMap", Namespace: "n", Name: "a", Status: tc.health}}
			if diff := cmp.Diff(want, st.Inventory); diff != "" {
				t.Errorf("inventory: %s", diff)
			}
			if st.ObservedGeneration != 2 {
				t.Errorf("observedGeneration %d", st.ObservedGeneration)
			}
		})
	}
}
