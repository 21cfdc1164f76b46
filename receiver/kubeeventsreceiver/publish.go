// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objevents"
)

// publish hands the Events a list page or a watch batch brought to trace_context's Event hub
// (internal/k8smodel/objevents), before this receiver's own filters, for the components that
// act on Events instead of watching objects (kube_lifecycle's rollouts). A no-op without a hub.
func (t *term) publish(evs []event, listed bool) {
	if t.hub == nil || len(evs) == 0 {
		return
	}
	out := make([]objevents.Event, len(evs))
	for i := range evs {
		e := &evs[i]
		out[i] = objevents.Event{
			Regarding: objevents.Ref{
				APIVersion: e.Regarding.APIVersion, Kind: e.Regarding.Kind, Namespace: e.Regarding.Namespace,
				Name: e.Regarding.Name, UID: e.Regarding.UID,
			},
			Reason: e.Reason, ReportingController: e.ReportingController, Note: e.Note, Time: e.Last,
		}
	}
	t.hub.PublishObjectEvents(out, listed)
}
