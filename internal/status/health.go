package status

import (
	"fmt"
	"strings"

	kstatus "github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavesmith/wavesmith/api/inventory"
)

// Health values of a child, as kstatus names them; Unknown is for children
// the controller may not read (Secrets), Absent for a hook or an object
// with a purge order that is not there when every other child is Current
// (see settle).
const (
	Current    = string(kstatus.CurrentStatus)
	InProgress = string(kstatus.InProgressStatus)
	Failed     = string(kstatus.FailedStatus)
	NotFound   = string(kstatus.NotFoundStatus)
	Unknown    = string(kstatus.UnknownStatus)
	Absent     = "Absent"
)

// Health computes the status of a child: kstatus, then the child's
// wavesmith.io/status-hint as component-operator-runtime reads it:
// has-observed-generation (a missing status.observedGeneration means not
// yet observed), has-ready-condition (a missing Ready condition means not
// ready), conditions=A;B (each must be True). A nil object is NotFound.
func Health(u *unstructured.Unstructured) (string, string) {
	if u == nil {
		return NotFound, "not found"
	}
	if u.GetDeletionTimestamp() != nil {
		return InProgress, "being deleted"
	}
	res, err := kstatus.Compute(u)
	if err != nil {
		return Unknown, err.Error()
	}
	st, msg := string(res.Status), res.Message
	if st == string(kstatus.TerminatingStatus) {
		st = InProgress
	}
	if st != Current {
		return st, msg
	}
	if gvk := u.GroupVersionKind(); gvk.Group == "route.openshift.io" && gvk.Kind == "Route" {
		if st, msg = routeHealth(u); st != Current {
			return st, msg
		}
	}
	hints := u.GetAnnotations()[inventory.StatusHint]
	for _, h := range strings.Split(hints, ",") {
		h = strings.TrimSpace(h)
		switch {
		case h == "":
		case h == "has-observed-generation":
			if _, found, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration"); !found {
				return InProgress, "status.observedGeneration not yet set"
			}
		case h == "has-ready-condition":
			if c := condition(u, "Ready"); c == "" {
				return InProgress, "no Ready condition yet"
			}
		case strings.HasPrefix(h, "conditions="):
			for _, t := range strings.Split(strings.TrimPrefix(h, "conditions="), ";") {
				if t = strings.TrimSpace(t); t != "" && condition(u, t) != "True" {
					return InProgress, fmt.Sprintf("condition %s is not True", t)
				}
			}
		}
	}
	return Current, msg
}

// condition returns the status of a condition ("" when absent).
func condition(u *unstructured.Unstructured, typ string) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == typ {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}

// routeHealth reads the Admitted conditions the routers write in
// status.ingress[]: Current when one router admitted the Route, Failed
// when every router that answered rejected it, InProgress before.
func routeHealth(u *unstructured.Unstructured) (string, string) {
	host, rejected := admittedHost(u)
	switch {
	case host != "":
		return Current, "admitted as " + host
	case rejected != "":
		return Failed, "not admitted: " + rejected
	default:
		return InProgress, "not admitted by a router yet"
	}
}

// admittedHost returns the host of the first status.ingress[] entry whose
// Admitted condition is True; else, when a router rejected the Route
// (Admitted False), why.
func admittedHost(route *unstructured.Unstructured) (host, rejected string) {
	ing, _, _ := unstructured.NestedSlice(route.Object, "status", "ingress")
	for _, i := range ing {
		m, _ := i.(map[string]any)
		h, _ := m["host"].(string)
		conds, _ := m["conditions"].([]any)
		for _, c := range conds {
			cm, _ := c.(map[string]any)
			if cm["type"] != "Admitted" {
				continue
			}
			switch cm["status"] {
			case "True":
				if h != "" {
					return h, ""
				}
			case "False":
				if rejected == "" {
					router, _ := m["routerName"].(string)
					reason, _ := cm["reason"].(string)
					msg, _ := cm["message"].(string)
					rejected = fmt.Sprintf("router %q rejected host %q: %s", router, h, reason)
					if msg != "" {
						rejected += ": " + msg
					}
				}
			}
		}
	}
	return "", rejected
}

// childHealth is the health of the object observed for an inventory entry:
// Health, except for a Job the inventory lists as a hook (hook=), which is
// waited for until it finishes, as Helm waits for its hooks: kstatus reads
// any started Job as Current, which would make a Component Ready while its
// post-install hook still runs. A plain Job keeps kstatus's reading, as
// Flux has it.
func childHealth(e inventory.Entry, u *unstructured.Unstructured) (string, string) {
	st, msg := Health(u)
	if u == nil || e.Hook == "" || e.Group != "batch" || e.Kind != "Job" || st == Unknown || u.GetDeletionTimestamp() != nil {
		return st, msg
	}
	return hookJobHealth(u)
}

// hookJobHealth reads a Job as the job controller writes it: Current once
// its Complete condition is True, Failed once its Failed condition is
// True, InProgress before (not started yet, or running).
func hookJobHealth(u *unstructured.Unstructured) (string, string) {
	switch {
	case condition(u, "Complete") == "True":
		return Current, "hook Job complete"
	case condition(u, "Failed") == "True":
		reason, msg := conditionText(u, "Failed")
		return Failed, strings.TrimSuffix("hook Job failed: "+reason+": "+msg, ": ")
	}
	if start, _, _ := unstructured.NestedString(u.Object, "status", "startTime"); start == "" {
		return InProgress, "hook Job not started yet"
	}
	active, _, _ := unstructured.NestedInt64(u.Object, "status", "active")
	succeeded, _, _ := unstructured.NestedInt64(u.Object, "status", "succeeded")
	failed, _, _ := unstructured.NestedInt64(u.Object, "status", "failed")
	return InProgress, fmt.Sprintf("hook Job running: active %d, succeeded %d, failed %d", active, succeeded, failed)
}

// conditionText returns the reason and message of a condition.
func conditionText(u *unstructured.Unstructured, typ string) (string, string) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			r, _ := m["reason"].(string)
			msg, _ := m["message"].(string)
			return r, msg
		}
	}
	return "", ""
}
