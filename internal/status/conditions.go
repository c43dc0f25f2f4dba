package status

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kstatus's abnormal-true condition types, which Flux (kstatus) and the
// Argo CD health checks of kustomize/argocd read before Ready.
const (
	ConditionReconciling = "Reconciling"
	ConditionStalled     = "Stalled"
)

// Reasons of the Stalled condition.
const (
	ReasonChildFailed      = "ChildFailed"
	ReasonInvalidInventory = "InvalidInventory"
	ReasonPathNotServed    = "PathNotServed"
)

// progress is where a spec stands for kstatus.
type progress int

const (
	// done: every child is ready; neither Reconciling nor Stalled.
	done progress = iota
	// working: children are missing or coming up; Reconciling=True.
	working
	// failed: a child failed or the spec cannot work; Stalled=True.
	failed
)

// setProgress writes Reconciling and Stalled for p, so that kstatus reads
// Current (done), InProgress (working) or Failed (failed) together with
// the Ready condition: Stalled=True while failed, Reconciling=True while
// working, and neither condition otherwise.
func setProgress(conds *[]metav1.Condition, p progress, reason, msg string, gen int64, now metav1.Time) {
	switch p {
	case failed:
		meta.RemoveStatusCondition(conds, ConditionReconciling)
		setCondition(conds, metav1.Condition{Type: ConditionStalled, Status: metav1.ConditionTrue, Reason: reason, Message: msg, ObservedGeneration: gen}, now)
	case working:
		meta.RemoveStatusCondition(conds, ConditionStalled)
		setCondition(conds, metav1.Condition{Type: ConditionReconciling, Status: metav1.ConditionTrue, Reason: reason, Message: msg, ObservedGeneration: gen}, now)
	default:
		meta.RemoveStatusCondition(conds, ConditionStalled)
		meta.RemoveStatusCondition(conds, ConditionReconciling)
	}
}

// stalledReason is the reason of Stalled: the inventory is invalid, else a
// child failed, else other (a failure of the spec itself).
func stalledReason(children []observed, invErr error, other string) string {
	if invErr != nil {
		return ReasonInvalidInventory
	}
	for _, c := range children {
		if c.Health == Failed {
			return ReasonChildFailed
		}
	}
	return other
}

// setCondition sets c in conds; lastTransitionTime moves only when the
// status flips or the condition is new.
func setCondition(conds *[]metav1.Condition, c metav1.Condition, now metav1.Time) {
	c.LastTransitionTime = now
	meta.SetStatusCondition(conds, c)
}

// absentMessage is the message of a transient child that settle marked
// Absent.
const absentMessage = "a hook or an object with a purge order, not present: done"

// settle returns the children with every NotFound child whose entry has a
// hook or a purge order (Entry.Transient) marked Absent, when every other
// child is Current (or Unknown: a Secret, never read). Argo CD deletes a
// hook-succeeded hook once it succeeded, and creates a post-install hook
// only after the spec's wave is healthy: waiting for either would keep the
// spec Pending forever. A transient child that is present counts as any
// other.
func settle(children []observed) []observed {
	for _, c := range children {
		if !c.Entry.Transient() && c.Health != Current && c.Health != Unknown {
			return children
		}
	}
	out := append([]observed(nil), children...)
	for i := range out {
		if out[i].Entry.Transient() && out[i].Health == NotFound {
			out[i].Health, out[i].Message = Absent, absentMessage
		}
	}
	return out
}

// summary names the children that are not ready, with the message of
// those that failed.
func summary(children []observed, invErr error) string {
	if invErr != nil {
		return invErr.Error()
	}
	var parts []string
	for _, c := range children {
		if c.Health == Current || c.Health == Unknown || c.Health == Absent {
			continue
		}
		p := fmt.Sprintf("%s %s/%s: %s", c.Entry.Kind, c.Entry.Namespace, c.Entry.Name, strings.ToLower(c.Health))
		if c.Health == Failed && c.Message != "" {
			p += ": " + c.Message
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return "not rendered"
	}
	return strings.Join(parts, "; ")
}

// absentNote names the children settle marked Absent ("" when none).
func absentNote(children []observed) string {
	var names []string
	for _, c := range children {
		if c.Health == Absent {
			names = append(names, fmt.Sprintf("%s %s/%s", c.Entry.Kind, c.Entry.Namespace, c.Entry.Name))
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "; absent, as hooks or objects with a purge order may be: " + strings.Join(names, ", ")
}
