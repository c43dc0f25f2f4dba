package status

import (
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wavesmith/wavesmith/api/v1alpha1"
)

// Component states (a read-only observer's subset of
// component-operator-runtime's).
const (
	StatePending    = "Pending"
	StateProcessing = "Processing"
	StateReady      = "Ready"
	StateError      = "Error"
)

// componentStatus computes the status of a Component from its observed
// children: Ready when all are Current (or Absent, see settle); Error when
// one Failed; Pending while one is missing; Processing otherwise. The
// Ready condition is True, False (Error) or Unknown, with
// component-operator-runtime's reasons; Stalled=True goes with Error and
// Reconciling=True with Pending and Processing, as kstatus reads them.
func componentStatus(c *v1alpha1.Component, children []observed, invErr error, now metav1.Time) v1alpha1.ComponentStatus {
	children = settle(children)
	st := v1alpha1.ComponentStatus{ObservedGeneration: c.Generation}
	conds := append([]metav1.Condition(nil), c.Status.Conditions...)
	rank := map[string]int{StateReady: 0, StateProcessing: 1, StatePending: 2, StateError: 3}
	state := StateReady
	for _, ch := range children {
		st.Inventory = append(st.Inventory, v1alpha1.InventoryItem{
			Group: ch.Entry.Group, Version: ch.Entry.Version, Kind: ch.Entry.Kind,
			Namespace: ch.Entry.Namespace, Name: ch.Entry.Name, Status: ch.Health,
		})
		s := StateReady
		switch ch.Health {
		case Failed:
			s = StateError
		case NotFound:
			s = StatePending
		case InProgress:
			s = StateProcessing
		}
		if rank[s] > rank[state] {
			state = s
		}
	}
	cond := metav1.Condition{Type: ConditionReady, ObservedGeneration: c.Generation}
	switch {
	case invErr != nil:
		state = StateError
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, "Error", invErr.Error()
	case len(children) == 0:
		state = StatePending
		cond.Status, cond.Reason, cond.Message = metav1.ConditionUnknown, "Pending", "no wavesmith.io/inventory: render the spec with wavesmith"
	case state == StateReady:
		present := 0
		for _, ch := range children {
			if ch.Health != Absent {
				present++
			}
		}
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, "Ready", fmt.Sprintf("all %d objects are ready", present)+absentNote(children)
	case state == StateError:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, "Error", summary(children, nil)
	case state == StatePending:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionUnknown, "Pending", summary(children, nil)
	default:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionUnknown, "Processing", summary(children, nil)
	}
	setCondition(&conds, cond, now)
	switch state {
	case StateReady:
		setProgress(&conds, done, "", "", c.Generation, now)
	case StateError:
		setProgress(&conds, failed, stalledReason(children, invErr, ReasonChildFailed), cond.Message, c.Generation, now)
	default:
		setProgress(&conds, working, state, cond.Message, c.Generation, now)
	}
	sort.SliceStable(conds, func(i, j int) bool { return conds[i].Type < conds[j].Type })
	st.Conditions, st.State = conds, state
	return st
}
