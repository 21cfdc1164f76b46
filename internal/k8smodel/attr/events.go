// SPDX-License-Identifier: Apache-2.0

package attr

// Kubernetes Event attributes written by kube_events. Semantic conventions (v1.43.0) have no
// names for an Event's fields, so they live under the project's prefix. An Event's regarding
// object is written with the Subject set, its related object with the Related set; its
// namespace is the resource's k8s.namespace.name.
const (
	// EventRecordName is the LogRecord EventName of a record made from a Kubernetes Event (a
	// record field, not an attribute).
	EventRecordName = Prefix + "event"

	EventReason              = Prefix + "event.reason"
	EventAction              = Prefix + "event.action"
	EventType                = Prefix + "event.type"
	EventReportingController = Prefix + "event.reporting_controller"
	EventReportingInstance   = Prefix + "event.reporting_instance"
	EventUID                 = Prefix + "event.uid"
	EventName                = Prefix + "event.name"
	EventCount               = Prefix + "event.count"
	EventFirstObserved       = Prefix + "event.first_observed"
	EventLastObserved        = Prefix + "event.last_observed"
	EventSeriesState         = Prefix + "event.series.state"
	EventSeriesRate          = Prefix + "event.series.rate"
	EventLegacy              = Prefix + "event.legacy"
	// EventNote is the Event's note on a span (a log record carries it as its body).
	EventNote = Prefix + "event.note"
)

func init() {
	w := []string{"kube_events"}
	e := func(name, typ, doc string) Entry {
		return Entry{Name: name, Origin: Own, Place: Record, Type: typ, Writers: w, Doc: doc}
	}
	register(
		e(EventReason, "string", "the Event's reason (why the action was taken or failed)"),
		e(EventAction, "string", "the Event's action (what was done or failed)"),
		e(EventType, "string", "the Event's type: Normal, Warning or another type as written"),
		e(EventReportingController, "string", "controller that wrote the Event (deprecatedSource.component for core/v1 writers)"),
		e(EventReportingInstance, "string", "its instance (deprecatedSource.host for core/v1 writers)"),
		e(EventUID, "string", "uid of the Event object"),
		e(EventName, "string", "name of the Event object"),
		e(EventCount, "int", "occurrences of the Event so far (series.count, deprecatedCount, or 1); on a span, all of its occurrences"),
		e(EventFirstObserved, "string", "first occurrence, RFC 3339 with nanoseconds"),
		e(EventLastObserved, "string", "latest occurrence, RFC 3339 with nanoseconds"),
		e(EventSeriesState, "string", "singleton, start, ongoing or finished: what the record says about the Event's series"),
		e(EventSeriesRate, "double", "occurrences per second since the series' previous record (ongoing and finished)"),
		e(EventLegacy, "bool", "the Event was written through core/v1 (no eventTime); its count is PATCHed at every occurrence"),
		e(EventNote, "string", "the Event's note, on its span (log records carry it as the body)"),
	)
}
