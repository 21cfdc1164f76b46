// SPDX-License-Identifier: Apache-2.0

package objevents

import (
	"reflect"
	"testing"
)

func equal(t *testing.T, what string, want, got any) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		t.Errorf("%s: want %v, got %v", what, want, got)
	}
}

type recorder struct {
	events  []Event
	listed  []bool
	leading []bool
}

func (r *recorder) ObjectEvents(evs []Event, listed bool) {
	r.events = append(r.events, evs...)
	r.listed = append(r.listed, listed)
}

func (r *recorder) Leading(l bool) { r.leading = append(r.leading, l) }

func TestHub(t *testing.T) {
	var h Hub
	early := &recorder{}
	stopEarly := h.SubscribeObjectEvents(early)
	h.PublishObjectEvents(nil, false) // nothing to hand: no call
	equal(t, "calls without events", 0, len(early.listed))

	h.PublishLeading(true)
	ev := Event{Regarding: Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "web", UID: "u"}, Reason: "ScalingReplicaSet"}
	h.PublishObjectEvents([]Event{ev}, true)

	late := &recorder{} // joins while the publisher leads: told at once
	stopLate := h.SubscribeObjectEvents(late)
	equal(t, "late joiner told", []bool{true}, late.leading)

	h.PublishObjectEvents([]Event{ev, ev}, false)
	stopEarly()
	h.PublishObjectEvents([]Event{ev}, false)
	h.PublishLeading(false)
	stopLate()
	h.PublishLeading(true)

	equal(t, "early events", []Event{ev, ev, ev}, early.events)
	equal(t, "early listed", []bool{true, false}, early.listed)
	equal(t, "early leading", []bool{true}, early.leading)
	equal(t, "late events", 3, len(late.events))
	equal(t, "late listed", []bool{false, false}, late.listed)
	equal(t, "late leading", []bool{true, false}, late.leading)
}
