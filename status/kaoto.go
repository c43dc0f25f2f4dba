package status

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	designerv1alpha1 "github.com/wavesmith/wavesmith/api/designer/v1alpha1"
)

// Kaoto phases.
const (
	PhasePending     = "Pending"
	PhaseProgressing = "Progressing"
	PhaseReady       = "Ready"
	PhaseError       = "Error"
)

// Kaoto condition types: the operator's four, plus Ready.
const (
	ConditionDeployment = "Deployment"
	ConditionIngress    = "Ingress"
	ConditionReconcile  = "Reconcile"
	ConditionService    = "Service"
	ConditionReady      = "Ready"
)

// kaotoStatus computes the status of a Kaoto from its observed children.
// invErr is a problem with the inventory itself. existing conditions keep
// their lastTransitionTime unless their status flips.
func kaotoStatus(k *designerv1alpha1.Kaoto, children []observed, invErr error, now metav1.Time) designerv1alpha1.KaotoStatus {
	gen := k.Generation
	st := designerv1alpha1.KaotoStatus{ObservedGeneration: gen}
	conds := append([]metav1.Condition(nil), k.Status.Conditions...)
	set := func(typ string, ok bool, reason, msg string) {
		s := metav1.ConditionFalse
		if ok {
			s = metav1.ConditionTrue
		}
		setCondition(&conds, metav1.Condition{Type: typ, Status: s, Reason: reason, Message: msg, ObservedGeneration: gen}, now)
	}

	var svc, ing, route, dep *observed
	for i := range children {
		c := &children[i]
		switch c.Entry.Group + "/" + c.Entry.Kind {
		case "/Service":
			svc = c
		case "networking.k8s.io/Ingress":
			ing = c
		case "route.openshift.io/Route":
			route = c
		case "apps/Deployment":
			dep = c
		}
	}

	phase := PhaseReady
	worse := func(p string) {
		rank := map[string]int{PhaseReady: 0, PhaseProgressing: 1, PhasePending: 2, PhaseError: 3}
		if rank[p] > rank[phase] {
			phase = p
		}
	}
	childCondition := func(typ string, c *observed, what string) {
		if c == nil {
			set(typ, false, "NotRendered", what+" is not in the inventory: render the spec with wavesmith")
			worse(PhasePending)
			return
		}
		name := c.Entry.Kind + " " + c.Entry.Namespace + "/" + c.Entry.Name
		switch c.Health {
		case Current:
			set(typ, true, "Ready", name+" is ready")
		case NotFound:
			set(typ, false, "NotFound", name+" not found")
			worse(PhasePending)
		case Failed:
			set(typ, false, "Failed", name+": "+c.Message)
			worse(PhaseError)
		default:
			set(typ, false, "Progressing", name+": "+c.Message)
			worse(PhaseProgressing)
		}
	}

	if invErr != nil {
		set(ConditionReconcile, false, "InvalidInventory", invErr.Error())
		phase = PhaseError
	} else {
		childCondition(ConditionService, svc, "the Service")
		switch {
		case route != nil:
			childCondition(ConditionIngress, route, "the Route")
		case ing != nil:
			childCondition(ConditionIngress, ing, "the Ingress")
		case k.Spec.Ingress != nil:
			childCondition(ConditionIngress, nil, "the Ingress or Route")
		default:
			set(ConditionIngress, false, "NotRequires", "spec.ingress is not set")
		}
		childCondition(ConditionDeployment, dep, "the Deployment")
		set(ConditionReconcile, true, "Reconciled", fmt.Sprintf("%d children observed", len(children)))
	}
	if phase == PhaseReady {
		set(ConditionReady, true, PhaseReady, "all children are ready")
	} else {
		set(ConditionReady, false, phase, summary(children, invErr))
	}
	sort.SliceStable(conds, func(i, j int) bool { return conds[i].Type < conds[j].Type })
	st.Conditions, st.Phase = conds, phase
	st.Endpoint = Endpoint(object(svc), object(ing), object(route))
	return st
}

func object(o *observed) *unstructured.Unstructured {
	if o == nil {
		return nil
	}
	return o.Object
}

// summary names the children that are not ready.
func summary(children []observed, invErr error) string {
	if invErr != nil {
		return invErr.Error()
	}
	var parts []string
	for _, c := range children {
		if c.Health != Current && c.Health != Unknown {
			parts = append(parts, fmt.Sprintf("%s %s/%s: %s", c.Entry.Kind, c.Entry.Namespace, c.Entry.Name, strings.ToLower(c.Health)))
		}
	}
	if len(parts) == 0 {
		return "not rendered"
	}
	return strings.Join(parts, "; ")
}

// setCondition sets c in conds; lastTransitionTime moves only when the
// status flips or the condition is new.
func setCondition(conds *[]metav1.Condition, c metav1.Condition, now metav1.Time) {
	c.LastTransitionTime = now
	meta.SetStatusCondition(conds, c)
}
