package kaoto

import (
	"sync"
	"sync/atomic"
)

// ownMaps hands out the maps and one-item lists of one Kaoto's children
// that are the Kaoto's own (the rest is shared: parts). A render that
// drops the children once it has encoded them releases them
// (generators.Result.Release): every map and list handed out is cleared
// and the set serves the next Kaoto, so that a render of many Kaotos makes
// each child's 5 to 11 maps once per core instead of once per Kaoto (at
// 10,000 Kaotos, about 60 MB less to allocate and for the kernel to
// zero). The maps keep their slots when cleared: one refilled with the
// same keys allocates nothing.
type ownMaps struct {
	maps  []map[string]any
	lists [][]any
	// used counts what the current Kaoto took of maps and lists.
	usedMaps, usedLists int
	// lent counts the Kaotos the set served: a Release of an earlier one
	// (a second call) does nothing.
	lent atomic.Uint64
}

// ownPool holds released sets; made counts the sets made (tests: that a
// render reuses them).
var (
	ownPool sync.Pool
	made    atomic.Int64
)

// takeMaps returns a set whose maps and lists are all empty.
func takeMaps() *ownMaps {
	if o, ok := ownPool.Get().(*ownMaps); ok {
		return o
	}
	made.Add(1)
	// As many as a Kaoto's children take (Service 5, Ingress 10,
	// Deployment 11; a Route 8): a set that is never released (a caller
	// that keeps the objects) costs a few allocations more, not one per
	// map added.
	return &ownMaps{maps: make([]map[string]any, 0, 26), lists: make([][]any, 0, 3)}
}

// releaser is the Release of the Kaoto the set serves now: the first call
// returns the set to the pool, any later one does nothing (the set may
// serve another Kaoto by then).
func (o *ownMaps) releaser() func() {
	n := o.lent.Load()
	return func() {
		if o.lent.CompareAndSwap(n, n+1) {
			o.put()
		}
	}
}

// m returns an empty map of the set.
func (o *ownMaps) m() map[string]any {
	if o.usedMaps == len(o.maps) {
		o.maps = append(o.maps, map[string]any{})
	}
	m := o.maps[o.usedMaps]
	o.usedMaps++
	return m
}

// list returns a list of the set holding v alone.
func (o *ownMaps) list(v any) []any {
	if o.usedLists == len(o.lists) {
		o.lists = append(o.lists, make([]any, 1))
	}
	l := o.lists[o.usedLists]
	o.usedLists++
	l[0] = v
	return l
}

// put clears what the set handed out (nothing of a released Kaoto stays
// reachable from it, nor shows in the next one) and returns it to the
// pool.
func (o *ownMaps) put() {
	for _, m := range o.maps[:o.usedMaps] {
		clear(m)
	}
	for _, l := range o.lists[:o.usedLists] {
		clear(l)
	}
	o.usedMaps, o.usedLists = 0, 0
	ownPool.Put(o)
}
