// SPDX-License-Identifier: Apache-2.0

// Package attr is the registry of every attribute name the project's components write.
//
// Names from OpenTelemetry semantic conventions are used as the conventions define them, and
// only those: a resource's k8s.pod.name is the pod that produced the data. Everything else the
// project writes lives under its own prefix, Prefix, never inside a semantic-convention
// namespace. The registry test checks both: every Semconv entry exists in the semantic
// conventions version the project pins, and no Own entry is inside a convention namespace.
package attr

// Prefix is the project's attribute namespace.
const Prefix = "otelcol_k8s."

// Origin says who defines an attribute name.
type Origin uint8

// Origins.
const (
	// Semconv names are defined by OpenTelemetry semantic conventions.
	Semconv Origin = iota + 1
	// Own names are the project's, under Prefix.
	Own
)

// Place says where an attribute is written.
type Place uint8

// Places.
const (
	// Resource attributes say where data came from.
	Resource Place = iota + 1
	// Record attributes describe one log record (or span).
	Record
)

// Entry is one registered attribute.
type Entry struct {
	Name   string
	Origin Origin
	Place  Place
	// Type is the pdata value type written: "string", "int", "bool", "double", "map", "slice".
	Type string
	// Writers lists the components that write it (component type names).
	Writers []string
	// Doc says what it holds.
	Doc string
}

var registry = map[string]Entry{}

func register(entries ...Entry) {
	for _, e := range entries {
		if _, dup := registry[e.Name]; dup {
			panic("attr: " + e.Name + " registered twice")
		}
		registry[e.Name] = e
	}
}

// Lookup returns the registered entry for name.
func Lookup(name string) (Entry, bool) {
	e, ok := registry[name]
	return e, ok
}

// All returns every registered entry, in no particular order.
func All() []Entry {
	out := make([]Entry, 0, len(registry))
	for _, e := range registry {
		out = append(out, e)
	}
	return out
}

// Registered reports whether name is a registered attribute name.
func Registered(name string) bool {
	_, ok := registry[name]
	return ok
}
