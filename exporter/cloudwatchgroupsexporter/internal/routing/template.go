// SPDX-License-Identifier: Apache-2.0

package routing

import (
	"fmt"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// A stream name template is literal text with ${name} placeholders. The names host,
// routing_key and log_type are built in; any other name is an attribute key looked up on the
// resource (and on the record when it is one of the configured record attributes). An empty or missing value expands to "-".
type templatePart struct {
	literal string
	name    string // placeholder name; empty for a literal part
}

// Built-in template placeholders.
const (
	placeholderHost       = "host"
	placeholderRoutingKey = "routing_key"
	placeholderLogType    = "log_type"
)

func parseTemplate(s string) ([]templatePart, error) {
	if s == "" {
		return nil, nil
	}
	var parts []templatePart
	for len(s) > 0 {
		i := strings.Index(s, "${")
		if i < 0 {
			parts = append(parts, templatePart{literal: s})
			break
		}
		if i > 0 {
			parts = append(parts, templatePart{literal: s[:i]})
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return nil, fmt.Errorf("stream_name_template: unclosed ${ at byte %d", i)
		}
		name := s[i+2 : i+j]
		if name == "" {
			return nil, fmt.Errorf("stream_name_template: empty ${} at byte %d", i)
		}
		parts = append(parts, templatePart{name: name})
		s = s[i+j+1:]
	}
	return parts, nil
}

func (r *Router) expandTemplate(res pcommon.Map, rec recAttrs, host, key string, typ LogType) string {
	var b strings.Builder
	for _, p := range r.template {
		if p.name == "" {
			b.WriteString(p.literal)
			continue
		}
		var v string
		switch p.name {
		case placeholderHost:
			v = host
		case placeholderRoutingKey:
			v = key
		case placeholderLogType:
			v = string(typ)
		default:
			v, _ = r.lookup(res, rec, p.name)
		}
		if v == "" {
			v = "-"
		}
		b.WriteString(v)
	}
	return b.String()
}
