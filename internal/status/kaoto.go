package status

import (
	"fmt"
	"sort"
	"strings"

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
// their lastTransitionTime unless their status flips. Besides the
// operator's conditions and Ready it writes kstatus's Reconciling (while
// Pending or Progressing) and Stalled (on Error), so that kstatus, Flux and
// Argo CD see a failure as one.
func kaotoStatus(k *designerv1alpha1.Kaoto, children []observed, invErr error, now metav1.Time) designerv1alpha1.KaotoStatus {
	children = settle(children)
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
	var problems []string // failures that are no child's health
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
		case route != nil && route.Object != nil && routePathProblem(route.Object) != "":
			p := routePathProblem(route.Object)
			set(ConditionIngress, false, ReasonPathNotServed, p)
			problems = append(problems, p)
			worse(PhaseError)
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
	msg := summary(children, invErr)
	if len(problems) > 0 {
		if msg == "not rendered" {
			msg = strings.Join(problems, "; ")
		} else {
			msg = strings.Join(append([]string{msg}, problems...), "; ")
		}
	}
	switch phase {
	case PhaseReady:
		set(ConditionReady, true, PhaseReady, "all children are ready"+absentNote(children))
		setProgress(&conds, done, "", "", gen, now)
	case PhaseError:
		set(ConditionReady, false, phase, msg)
		setProgress(&conds, failed, stalledReason(children, invErr, ReasonPathNotServed), msg, gen, now)
	default:
		set(ConditionReady, false, phase, msg)
		setProgress(&conds, working, phase, msg, gen, now)
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
