// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"bytes"
	"encoding/json"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objref"
)

// maxNote caps the note an open series keeps in memory for its finished record.
const maxNote = 1024

// event is one Event, whichever API and recorder wrote it, in the form the series inference
// and the record mapping use (design.md rule 2).
type event struct {
	UID, Name, Namespace, ResourceVersion string
	Type, Reason, Action, Note            string
	ReportingController                   string
	ReportingInstance                     string
	Regarding                             objref.Ref
	Related                               *objref.Ref
	// Count is the number of occurrences, at least 1.
	Count int32
	// First and Last are the first and the latest occurrence.
	First, Last time.Time
	// Legacy is set for Events written through core/v1 (no eventTime): their count is PATCHed
	// at every occurrence.
	Legacy bool
	// Written is when the series was last written, as the API server recorded it: the time of
	// the managedFields entry that owns the series (second precision, truncated); zero when no
	// entry owns it (design.md rule 3.1).
	Written time.Time
}

func refFrom(r corev1.ObjectReference) objref.Ref {
	return objref.Ref{
		Kind: r.Kind, APIVersion: r.APIVersion, Namespace: r.Namespace, Name: r.Name,
		UID: string(r.UID), FieldPath: r.FieldPath, ResourceVersion: r.ResourceVersion,
	}
}

// fromEventsV1 normalizes an events.k8s.io/v1 Event, native or in the legacy shape.
func fromEventsV1(e *eventsv1.Event) event {
	out := event{
		UID: string(e.UID), Name: e.Name, Namespace: e.Namespace, ResourceVersion: e.ResourceVersion,
		Type: e.Type, Reason: e.Reason, Action: e.Action, Note: e.Note,
		ReportingController: e.ReportingController, ReportingInstance: e.ReportingInstance,
		Regarding: refFrom(e.Regarding),
		Count:     1,
		Legacy:    e.EventTime.IsZero(),
	}
	if e.Related != nil {
		r := refFrom(*e.Related)
		out.Related = &r
	}
	if out.ReportingController == "" {
		out.ReportingController = e.DeprecatedSource.Component
	}
	if out.ReportingInstance == "" {
		out.ReportingInstance = e.DeprecatedSource.Host
	}
	switch {
	case e.Series != nil && e.Series.Count > 0:
		out.Count = e.Series.Count
	case e.DeprecatedCount > 0:
		out.Count = e.DeprecatedCount
	}
	out.Last = firstSet(microTime(e.Series), e.EventTime.Time, e.DeprecatedLastTimestamp.Time,
		e.DeprecatedFirstTimestamp.Time, e.CreationTimestamp.Time)
	if e.Series != nil {
		out.Written = seriesWriteTime(e.ManagedFields)
	}
	out.First = firstSet(e.EventTime.Time, e.DeprecatedFirstTimestamp.Time, e.CreationTimestamp.Time, out.Last)
	if out.First.After(out.Last) {
		out.First = out.Last
	}
	return out
}

// seriesWriteTime is the latest time of a managedFields entry owning the top-level series field:
// the API server sets an entry's time when its manager changes a field it owns, so this is when
// series.count or series.lastObservedTime last changed. Zero when no entry owns series.
func seriesWriteTime(mf []metav1.ManagedFieldsEntry) time.Time {
	var out time.Time
	for i := range mf {
		e := &mf[i]
		if e.Time == nil || e.FieldsV1 == nil || e.Subresource != "" || !ownsSeries(e.FieldsV1.GetRawBytes()) {
			continue
		}
		if t := e.Time.Truncate(time.Second); t.After(out) {
			out = t
		}
	}
	return out
}

// ownsSeries reports whether a FieldsV1 set has series at its top level.
func ownsSeries(raw []byte) bool {
	if !bytes.Contains(raw, []byte(`"f:series"`)) {
		return false
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return false
	}
	_, ok := top["f:series"]
	return ok
}

func microTime(s *eventsv1.EventSeries) time.Time {
	if s == nil {
		return time.Time{}
	}
	return s.LastObservedTime.Time
}

func firstSet(ts ...time.Time) time.Time {
	for _, t := range ts {
		if !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

// eventsV1FromCore converts a core/v1 Event to the events.k8s.io/v1 shape, field for field as
// the API server converts between the two versions.
func eventsV1FromCore(e *corev1.Event) *eventsv1.Event {
	out := &eventsv1.Event{
		ObjectMeta:               e.ObjectMeta,
		EventTime:                e.EventTime,
		ReportingController:      e.ReportingController,
		ReportingInstance:        e.ReportingInstance,
		Action:                   e.Action,
		Reason:                   e.Reason,
		Regarding:                e.InvolvedObject,
		Related:                  e.Related,
		Note:                     e.Message,
		Type:                     e.Type,
		DeprecatedSource:         e.Source,
		DeprecatedFirstTimestamp: e.FirstTimestamp,
		DeprecatedLastTimestamp:  e.LastTimestamp,
		DeprecatedCount:          e.Count,
	}
	if e.Series != nil {
		out.Series = &eventsv1.EventSeries{Count: e.Series.Count, LastObservedTime: e.Series.LastObservedTime}
	}
	return out
}
