// SPDX-License-Identifier: Apache-2.0

package routing

import "go.opentelemetry.io/collector/pdata/pcommon"

// recAttrs is a record's attributes as the router reads them. When missed is set, every key
// read from the record is appended to it.
type recAttrs struct {
	m      pcommon.Map
	missed *[]string
}

// Get returns the attribute key of the record.
func (a recAttrs) Get(key string) (pcommon.Value, bool) {
	if a.missed != nil {
		*a.missed = append(*a.missed, key)
	}
	return a.m.Get(key)
}

// Memo remembers the route of one resource's records. The router reads a record attribute
// only for a key the resource lacks (lookup tries the resource first), so a record that has
// none of the keys the router tried on an empty record takes exactly the route of the empty
// record: same lookups, same answers, same route. Any other record is routed in full.
// Reset it before the records of another resource.
type Memo struct {
	valid bool
	route Route
	keys  []string
}

// Reset forgets the remembered route.
func (m *Memo) Reset() { m.valid = false }

var emptyAttrs = pcommon.NewMap()

// RouteMemo returns Route(res, rec), reusing the route remembered in m for the records of
// res that carry none of the record attributes routing would read.
func (r *Router) RouteMemo(m *Memo, res, rec pcommon.Map) Route {
	if !m.valid {
		m.keys = m.keys[:0]
		m.route = r.route(res, recAttrs{m: emptyAttrs, missed: &m.keys})
		m.valid = true
	}
	for _, k := range m.keys {
		if _, ok := rec.Get(k); ok {
			return r.route(res, recAttrs{m: rec})
		}
	}
	return m.route
}
