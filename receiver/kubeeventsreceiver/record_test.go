// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objref"
)

// TestRecordAttributesFit checks the capacity record reserves holds every attribute an Event
// with every field set gets, so that its one allocation stays one.
func TestRecordAttributesFit(t *testing.T) {
	first := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	ref := func(kind, name string) objref.Ref {
		return objref.Ref{
			Kind: kind, APIVersion: "v1", Namespace: "default", Name: name, UID: "0b3c7a52-1d1e-4c1a-9d5e-7f8a9b0c1d2e",
			FieldPath: "spec.containers{app}", ResourceVersion: "42",
		}
	}
	related := ref("Pod", "web-1")
	tr := transition{
		State: stateOngoing, PrevCount: 2, PrevLast: first.Add(time.Minute),
		Event: event{
			UID: "6f1d2c3b-0a9e-4f8d-b7c6-5e4d3c2b1a09", Name: "web-0.17a2b3c4d5e6f7a8", Namespace: "default", ResourceVersion: "43",
			Type: "Warning", Reason: "BackOff", Action: "Restarting", Note: "Back-off restarting failed container",
			ReportingController: "kubelet", ReportingInstance: "node-1",
			Regarding: ref("Pod", "web-0"), Related: &related,
			Count: 9, First: first, Last: first.Add(5 * time.Minute), Legacy: true,
		},
	}
	logs := plog.NewLogs()
	b := recordBuilder{putRef: putObjectRef, rejected: func(w, r string) { t.Errorf("%s rejected: %s", w, r) }}
	b.build(logs, []transition{tr}, first.Add(6*time.Minute))
	got := logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes().Len()
	if want := recordAttributes + 2*objectAttributes; got > want {
		t.Errorf("%d attributes with every field set, more than the %d reserved: change recordAttributes or objectAttributes: %v", got, want, logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes().AsRaw())
	}
}

// TestSeverity is the table of design.md rule 10.
func TestSeverity(t *testing.T) {
	for _, tt := range []struct {
		typ  string
		want plog.SeverityNumber
	}{
		{"Normal", plog.SeverityNumberInfo},
		{"Warning", plog.SeverityNumberWarn},
		{"Error", plog.SeverityNumberError},
		{"Critical", plog.SeverityNumberFatal},
		{"Fatal", plog.SeverityNumberFatal},
		{"warning", plog.SeverityNumberUnspecified}, // types are case-sensitive, as kubectl shows them
		{"Info", plog.SeverityNumberUnspecified},
		{"", plog.SeverityNumberUnspecified},
	} {
		num, text := severity(tt.typ)
		if num != tt.want || text != tt.typ {
			t.Errorf("severity(%q) = %v %q, want %v %q", tt.typ, num, text, tt.want, tt.typ)
		}
	}
}
