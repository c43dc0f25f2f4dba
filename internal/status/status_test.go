package status

import (
	"errors"
	"testing"
	"time"

	kstatus "github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	designerv1alpha1 "github.com/wavesmith/wavesmith/api/designer/v1alpha1"
	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/api/v1alpha1"
)

func u(m map[string]any) *unstructured.Unstructured { return &unstructured.Unstructured{Object: m} }

// routeObj is a Route as the Kaoto operator and wavesmith render it, with
// the status.ingress[] a router writes: admitted "True", "False" or ""
// (no router answered yet).
func routeObj(path, host, admitted string) *unstructured.Unstructured {
	o := map[string]any{"apiVersion": "route.openshift.io/v1", "kind": "Route",
		"metadata": map[string]any{"name": "k4", "namespace": "demo", "generation": int64(1)},
		"spec":     map[string]any{"host": host, "path": path, "tls": map[string]any{"termination": "edge"}}}
	if admitted != "" {
		c := map[string]any{"type": "Admitted", "status": admitted}
		if admitted == "False" {
			c["reason"], c["message"] = "HostAlreadyClaimed", "route k4 already exposes "+host+" and is older"
		}
		o["status"] = map[string]any{"ingress": []any{map[string]any{"host": host, "routerName": "default", "conditions": []any{c}}}}
	}
	return u(o)
}

// kstatusOf computes what kstatus (Flux's health, cli-utils) says of a
// Kaoto or Component with this status.
func kstatusOf(t *testing.T, obj runtime.Object) string {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	res, err := kstatus.Compute(u(m))
	if err != nil {
		t.Fatal(err)
	}
	return string(res.Status)
}

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
	twoRouters := routeObj("/designer", "internal.example.com", "False")
	ing, _, _ := unstructured.NestedSlice(twoRouters.Object, "status", "ingress")
	ing = append(ing, map[string]any{"host": "kaoto.example.com", "routerName": "public", "conditions": []any{map[string]any{"type": "Admitted", "status": "True"}}})
	_ = unstructured.SetNestedSlice(twoRouters.Object, ing, "status", "ingress")
	cases := map[string]struct {
		reason              string
		svc, ingress, route *unstructured.Unstructured
		want                string
	}{
		"ServiceOnly":     {"no Ingress: the in-cluster URL, with its port", svc, nil, nil, "http://k.demo.svc.cluster.local:8080/"},
		"IngressHostPath": {"the Ingress host and path, without the rewrite regex", svc, ingress("kaoto.example.com", "/designer(/|$)(.*)", nil, false), nil, "http://kaoto.example.com/designer/"},
		"IngressTLS":      {"https when a TLS entry covers the host", svc, ingress("kaoto.example.com", "/designer(/|$)(.*)", nil, true), nil, "https://kaoto.example.com/designer/"},
		"IngressLBIP":     {"no host: the load-balancer IP with the path", svc, ingress("", "/k2(/|$)(.*)", map[string]any{"ip": "192.168.49.2"}, false), nil, "http://192.168.49.2/k2/"},
		"IngressLBName":   {"the load-balancer hostname wins over its IP", svc, ingress("", "/k2(/|$)(.*)", map[string]any{"hostname": "lb.example.net", "ip": "1.2.3.4"}, false), nil, "http://lb.example.net/k2/"},
		"IngressNoLB":     {"no host and no address yet: the Service", svc, ingress("", "/k2(/|$)(.*)", nil, false), nil, "http://k.demo.svc.cluster.local:8080/"},
		"Route":           {"an admitted Route: https, its host and path", svc, nil, routeObj("/designer", "kaoto.example.com", "True"), "https://kaoto.example.com/designer/"},
		"RouteRoot":       {"a Route at /", svc, nil, routeObj("/", "k2-demo.apps.example.com", "True"), "https://k2-demo.apps.example.com/"},
		"RouteGenerated": {"the admitted host, not spec.host (empty: OpenShift generates one)",
			svc, nil, routeObj("/k2", "k2-demo.apps.example.com", "True"), "https://k2-demo.apps.example.com/k2/"},
		"RouteNotAdmitted": {"no router answered yet: the Service", svc, nil, routeObj("/", "kaoto.example.com", ""), "http://k.demo.svc.cluster.local:8080/"},
		"RouteNoCondition": {"a status.ingress[] entry without Admitted is no admission: the Service",
			svc, nil, u(map[string]any{"apiVersion": "route.openshift.io/v1", "kind": "Route", "spec": map[string]any{"path": "/"},
				"status": map[string]any{"ingress": []any{map[string]any{"host": "kaoto.example.com"}}}}), "http://k.demo.svc.cluster.local:8080/"},
		"RouteRejected": {"a rejected host serves nothing: the Service", svc, nil, routeObj("/designer", "kaoto.example.com", "False"), "http://k.demo.svc.cluster.local:8080/"},
		"RouteRegexPath": {"the Ingress regex leaked into a Route path: no URL serves it, the Service",
			svc, nil, routeObj("/bar(/|$)(.*)", "k4-demo.apps.cluster.example", "True"), "http://k.demo.svc.cluster.local:8080/"},
		"RouteTwoRouters": {"the host a router admitted, not the one another rejected",
			svc, nil, twoRouters, "https://kaoto.example.com/designer/"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Endpoint(tc.svc, tc.ingress, tc.route); got != tc.want {
				t.Errorf("%s: Endpoint() = %q, want %q", tc.reason, got, tc.want)
			}
		})
	}
}

// progressDeadlineExceeded is a Deployment the deployment controller gave
// up on: Progressing=False, ProgressDeadlineExceeded.
func progressDeadlineExceeded() *unstructured.Unstructured {
	return u(map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "k", "namespace": "demo", "generation": int64(1)},
		"spec": map[string]any{"replicas": int64(1)},
		"status": map[string]any{"observedGeneration": int64(1), "replicas": int64(1), "updatedReplicas": int64(1), "unavailableReplicas": int64(1),
			"conditions": []any{
				map[string]any{"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable"},
				map[string]any{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded", "message": `ReplicaSet "k-6d4cf56db6" has timed out progressing.`},
			}}})
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
		"DeadlineExceeded": {"kstatus: a Deployment past its progress deadline is failed", progressDeadlineExceeded(), Failed},
		"NoConditions":     {"kstatus: a custom resource without conditions is current", cr(nil, ""), Current},
		"ObservedGenHint":  {"has-observed-generation: no observedGeneration yet", cr(nil, "has-observed-generation"), InProgress},
		"ObservedGenOK":    {"has-observed-generation: observed", cr(map[string]any{"observedGeneration": int64(1)}, "has-observed-generation"), Current},
		"ReadyHint":        {"has-ready-condition: no Ready yet", cr(map[string]any{}, "has-ready-condition"), InProgress},
		"ReadyFalse":       {"kstatus: Ready False is in progress", cr(map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "False"}}}, ""), InProgress},
		"ConditionsHint":   {"conditions=A;B: B not True", cr(map[string]any{"conditions": []any{map[string]any{"type": "A", "status": "True"}, map[string]any{"type": "B", "status": "False"}}}, "conditions=A;B"), InProgress},
		"ConditionsHintOK": {"conditions=A;B: both True", cr(map[string]any{"conditions": []any{map[string]any{"type": "A", "status": "True"}, map[string]any{"type": "B", "status": "True"}}}, "conditions=A;B"), Current},
		"Stalled":          {"kstatus: Stalled True is failed", cr(map[string]any{"conditions": []any{map[string]any{"type": "Stalled", "status": "True", "reason": "X"}}}, ""), Failed},
		"RouteAdmitted":    {"a Route a router admitted", routeObj("/", "kaoto.example.com", "True"), Current},
		"RouteWaiting":     {"a Route no router answered yet (kstatus alone says Current)", routeObj("/", "kaoto.example.com", ""), InProgress},
		"RouteRejected":    {"a Route every router rejected (Admitted=False)", routeObj("/", "kaoto.example.com", "False"), Failed},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got, msg := Health(tc.obj); got != tc.want {
				t.Errorf("%s: Health() = %s (%s), want %s", tc.reason, got, msg, tc.want)
			}
		})
	}
	if _, msg := Health(routeObj("/", "kaoto.example.com", "False")); msg != `not admitted: router "default" rejected host "kaoto.example.com": HostAlreadyClaimed: route k4 already exposes kaoto.example.com and is older` {
		t.Errorf("a rejected Route's message: %q", msg)
	}
}

func TestKaotoStatus(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	later := metav1.NewTime(now.Add(time.Hour))
	e := func(g, v, k string) inventory.Entry {
		return inventory.Entry{Group: g, Version: v, Kind: k, Namespace: "demo", Name: "k"}
	}
	svc, ing, dep, rt := e("", "v1", "Service"), e("networking.k8s.io", "v1", "Ingress"), e("apps", "v1", "Deployment"), e("route.openshift.io", "v1", "Route")
	k := &designerv1alpha1.Kaoto{ObjectMeta: metav1.ObjectMeta{Name: "k", Namespace: "demo", Generation: 3}, Spec: designerv1alpha1.KaotoSpec{Ingress: &designerv1alpha1.IngressSpec{}}}
	type row struct {
		Phase   string
		Conds   map[string]string
		KStatus string // what kstatus.Compute says of the Kaoto
	}
	summarize := func(st designerv1alpha1.KaotoStatus) row {
		r := row{Phase: st.Phase, Conds: map[string]string{}}
		for _, c := range st.Conditions {
			r.Conds[c.Type] = string(c.Status) + "/" + c.Reason
			if c.ObservedGeneration != 3 {
				t.Errorf("condition %s observedGeneration %d, want 3", c.Type, c.ObservedGeneration)
			}
		}
		obj := k.DeepCopy()
		obj.Status = st
		r.KStatus = kstatusOf(t, obj)
		return r
	}
	observe := func(e inventory.Entry, obj *unstructured.Unstructured) observed {
		h, msg := Health(obj)
		return observed{Entry: e, Object: obj, Health: h, Message: msg}
	}
	service := observe(svc, u(map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "k", "namespace": "demo"},
		"spec": map[string]any{"ports": []any{map[string]any{"port": int64(8080)}}}}))
	const svcURL = "http://k.demo.svc.cluster.local:8080/"
	cases := map[string]struct {
		reason   string
		children []observed
		invErr   error
		want     row
		endpoint string
	}{
		"Missing": {"children missing: Pending, Reconciling",
			[]observed{{Entry: svc, Health: NotFound}, {Entry: ing, Health: NotFound}, {Entry: dep, Health: NotFound}}, nil,
			row{PhasePending, map[string]string{"Service": "False/NotFound", "Ingress": "False/NotFound", "Deployment": "False/NotFound", "Reconcile": "True/Reconciled", "Ready": "False/Pending", "Reconciling": "True/Pending"}, "InProgress"}, ""},
		"Progressing": {"Deployment not available: Progressing, Reconciling",
			[]observed{{Entry: svc, Health: Current}, {Entry: ing, Health: Current}, {Entry: dep, Health: InProgress, Message: "Available: 0/1"}}, nil,
			row{PhaseProgressing, map[string]string{"Service": "True/Ready", "Ingress": "True/Ready", "Deployment": "False/Progressing", "Reconcile": "True/Reconciled", "Ready": "False/Progressing", "Reconciling": "True/Progressing"}, "InProgress"}, ""},
		"Ready": {"all current: Ready, neither Reconciling nor Stalled",
			[]observed{{Entry: svc, Health: Current}, {Entry: ing, Health: Current}, {Entry: dep, Health: Current}}, nil,
			row{PhaseReady, map[string]string{"Service": "True/Ready", "Ingress": "True/Ready", "Deployment": "True/Ready", "Reconcile": "True/Reconciled", "Ready": "True/Ready"}, "Current"}, ""},
		"Failed": {"a failed child: Error, Stalled",
			[]observed{{Entry: svc, Health: Current}, {Entry: ing, Health: Current}, {Entry: dep, Health: Failed, Message: "x"}}, nil,
			row{PhaseError, map[string]string{"Service": "True/Ready", "Ingress": "True/Ready", "Deployment": "False/Failed", "Reconcile": "True/Reconciled", "Ready": "False/Error", "Stalled": "True/ChildFailed"}, "Failed"}, ""},
		"ProgressDeadline": {"a Deployment past its progress deadline: Error, and kstatus reads Failed (not InProgress until the engines time out)",
			[]observed{{Entry: svc, Health: Current}, {Entry: ing, Health: Current}, observe(dep, progressDeadlineExceeded())}, nil,
			row{PhaseError, map[string]string{"Service": "True/Ready", "Ingress": "True/Ready", "Deployment": "False/Failed", "Reconcile": "True/Reconciled", "Ready": "False/Error", "Stalled": "True/ChildFailed"}, "Failed"}, ""},
		"BadInventory": {"an unreadable inventory: Error, Stalled",
			nil, errors.New("inventory entry \"x\": want group/version/Kind/namespace/name"),
			row{PhaseError, map[string]string{"Reconcile": "False/InvalidInventory", "Ready": "False/Error", "Stalled": "True/InvalidInventory"}, "Failed"}, ""},
		"RouteAdmitted": {"an admitted Route: Ready, its URL",
			[]observed{service, observe(rt, routeObj("/designer", "kaoto.example.com", "True")), {Entry: dep, Health: Current}}, nil,
			row{PhaseReady, map[string]string{"Service": "True/Ready", "Ingress": "True/Ready", "Deployment": "True/Ready", "Reconcile": "True/Reconciled", "Ready": "True/Ready"}, "Current"},
			"https://kaoto.example.com/designer/"},
		"RouteWaiting": {"a Route no router answered yet: Progressing",
			[]observed{service, observe(rt, routeObj("/designer", "kaoto.example.com", "")), {Entry: dep, Health: Current}}, nil,
			row{PhaseProgressing, map[string]string{"Service": "True/Ready", "Ingress": "False/Progressing", "Deployment": "True/Ready", "Reconcile": "True/Reconciled", "Ready": "False/Progressing", "Reconciling": "True/Progressing"}, "InProgress"}, svcURL},
		"RouteRejected": {"a Route with Admitted=False: not Ready, Stalled, no URL of the rejected host",
			[]observed{service, observe(rt, routeObj("/designer", "kaoto.example.com", "False")), {Entry: dep, Health: Current}}, nil,
			row{PhaseError, map[string]string{"Service": "True/Ready", "Ingress": "False/Failed", "Deployment": "True/Ready", "Reconcile": "True/Reconciled", "Ready": "False/Error", "Stalled": "True/ChildFailed"}, "Failed"}, svcURL},
		"RouteRegexPath": {"the Ingress regex leaked into the Route path: not Ready, Stalled, no URL from the Route",
			[]observed{service, observe(rt, routeObj("/bar(/|$)(.*)", "k4-demo.apps.cluster.example", "True")), {Entry: dep, Health: Current}}, nil,
			row{PhaseError, map[string]string{"Service": "True/Ready", "Ingress": "False/PathNotServed", "Deployment": "True/Ready", "Reconcile": "True/Reconciled", "Ready": "False/Error", "Stalled": "True/PathNotServed"}, "Failed"}, svcURL},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st := kaotoStatus(k, tc.children, tc.invErr, now)
			if diff := cmp.Diff(tc.want, summarize(st)); diff != "" {
				t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
			}
			if st.Endpoint != tc.endpoint {
				t.Errorf("%s: endpoint %q, want %q", tc.reason, st.Endpoint, tc.endpoint)
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

// TestKaotoStatusRecovers: a Kaoto that failed and recovers drops Stalled;
// one that becomes ready drops Reconciling (kstatus would otherwise keep
// reading InProgress or Failed).
func TestKaotoStatusRecovers(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	e := func(g, k string) inventory.Entry {
		return inventory.Entry{Group: g, Version: "v1", Kind: k, Namespace: "demo", Name: "k"}
	}
	k := &designerv1alpha1.Kaoto{ObjectMeta: metav1.ObjectMeta{Name: "k", Namespace: "demo", Generation: 1}}
	with := func(h string) []observed {
		return []observed{{Entry: e("", "Service"), Health: Current}, {Entry: e("apps", "Deployment"), Health: h}}
	}
	var trail []string
	for _, h := range []string{NotFound, Failed, InProgress, Current, Failed, Current} {
		k.Status = kaotoStatus(k, with(h), nil, now)
		var abnormal []string
		for _, c := range k.Status.Conditions {
			if c.Type == ConditionStalled || c.Type == ConditionReconciling {
				abnormal = append(abnormal, c.Type)
			}
		}
		trail = append(trail, h+":"+kstatusOf(t, k)+fmtList(abnormal))
	}
	want := []string{"NotFound:InProgress[Reconciling]", "Failed:Failed[Stalled]", "InProgress:InProgress[Reconciling]", "Current:Current[]", "Failed:Failed[Stalled]", "Current:Current[]"}
	if diff := cmp.Diff(want, trail); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}

func fmtList(s []string) string {
	out := "["
	for i, x := range s {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out + "]"
}

func TestComponentStatus(t *testing.T) {
	now := metav1.Now()
	c := &v1alpha1.Component{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
	e := inventory.Entry{Version: "v1", Kind: "ConfigMap", Namespace: "n", Name: "a"}
	cases := map[string]struct {
		health, state, ready, reason, kstatus string
	}{
		"Ready":      {Current, StateReady, "True", "Ready", "Current"},
		"Processing": {InProgress, StateProcessing, "Unknown", "Processing", "InProgress"},
		"Pending":    {NotFound, StatePending, "Unknown", "Pending", "InProgress"},
		"Error":      {Failed, StateError, "False", "Error", "Failed"},
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
			obj := c.DeepCopy()
			obj.Status = st
			if got := kstatusOf(t, obj); got != tc.kstatus {
				t.Errorf("kstatus %s, want %s (conditions %v)", got, tc.kstatus, st.Conditions)
			}
		})
	}
}

// TestComponentHooks: a hook or an object with a purge order that is not
// there counts as done (Absent) once every other child is Current; while
// another child is not, it is missing like any child. A present hook
// Job's own health: TestComponentHookJob.
func TestComponentHooks(t *testing.T) {
	now := metav1.Now()
	c := &v1alpha1.Component{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	zero := 0
	cm := inventory.Entry{Version: "v1", Kind: "ConfigMap", Namespace: "n", Name: "settings"}
	secret := inventory.Entry{Version: "v1", Kind: "Secret", Namespace: "n", Name: "creds"}
	pre := inventory.Entry{Group: "batch", Version: "v1", Kind: "Job", Namespace: "n", Name: "migrate", Hook: inventory.HookPreInstall, PurgeOrder: &zero}
	post := inventory.Entry{Group: "batch", Version: "v1", Kind: "Job", Namespace: "n", Name: "smoke", Hook: inventory.HookPostInstall}
	purged := inventory.Entry{Version: "v1", Kind: "Pod", Namespace: "n", Name: "probe", PurgeOrder: &zero}
	plainJob := inventory.Entry{Group: "batch", Version: "v1", Kind: "Job", Namespace: "n", Name: "migrate"}
	type row struct {
		State   string
		Items   map[string]string
		Message string
	}
	cases := map[string]struct {
		reason   string
		children []observed
		want     row
	}{
		"HooksGone": {"a deleted hook-succeeded hook and a post-install hook not created yet: Ready",
			[]observed{{Entry: cm, Health: Current}, {Entry: secret, Health: Unknown}, {Entry: pre, Health: NotFound}, {Entry: post, Health: NotFound}},
			row{StateReady, map[string]string{"settings": Current, "creds": Unknown, "migrate": Absent, "smoke": Absent},
				"all 2 objects are ready; absent, as hooks or objects with a purge order may be: Job n/migrate, Job n/smoke"}},
		"PurgedGone": {"an object with a purge order only: Ready",
			[]observed{{Entry: cm, Health: Current}, {Entry: purged, Health: NotFound}},
			row{StateReady, map[string]string{"settings": Current, "probe": Absent},
				"all 1 objects are ready; absent, as hooks or objects with a purge order may be: Pod n/probe"}},
		"OthersComingUp": {"another child not Current: the absent hook is missing",
			[]observed{{Entry: cm, Health: InProgress}, {Entry: pre, Health: NotFound}},
			row{StatePending, map[string]string{"settings": InProgress, "migrate": NotFound}, "ConfigMap n/settings: inprogress; Job n/migrate: notfound"}},
		"OtherMissing": {"another child missing: both missing",
			[]observed{{Entry: cm, Health: NotFound}, {Entry: post, Health: NotFound}},
			row{StatePending, map[string]string{"settings": NotFound, "smoke": NotFound}, "ConfigMap n/settings: notfound; Job n/smoke: notfound"}},
		// A present hook's health is computed from the Job objects the job
		// controller writes: TestComponentHookJob, on the API server.
		"NoAttributes": {"control: the same Job without hook or purge order is missing",
			[]observed{{Entry: cm, Health: Current}, {Entry: plainJob, Health: NotFound}},
			row{StatePending, map[string]string{"settings": Current, "migrate": NotFound}, "Job n/migrate: notfound"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st := componentStatus(c, tc.children, nil, now)
			got := row{State: st.State, Items: map[string]string{}}
			for _, it := range st.Inventory {
				got.Items[it.Name] = it.Status
			}
			for _, cd := range st.Conditions {
				if cd.Type == ConditionReady {
					got.Message = cd.Message
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
			}
			if tc.children[len(tc.children)-1].Health == NotFound && tc.children[len(tc.children)-1].Message != "" {
				t.Errorf("componentStatus changed its caller's children")
			}
		})
	}
}
