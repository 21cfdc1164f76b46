// SPDX-License-Identifier: Apache-2.0

// Package routing decides, for one log record, its log type, its CloudWatch Logs group and its
// log stream, as described in the component's design.md.
package routing

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/naming"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
)

// LogType is the kind of a log record.
type LogType string

// The three log types.
const (
	Application    LogType = "application"
	Infrastructure LogType = "infrastructure"
	Audit          LogType = "audit"
)

// GroupBy selects the group of application records.
type GroupBy string

// Group-by modes.
const (
	ByLogType       GroupBy = "log_type"
	ByNamespaceName GroupBy = "namespace_name"
	ByNamespaceUID  GroupBy = "namespace_uid"
)

// Group name kinds. Every group key except a log type starts with its kind and a "/"; log
// types contain no "/", so keys of different kinds never meet (design.md, section 2).
const (
	kindNamespace    = "namespace/"
	kindNamespaceUID = "namespace-uid/"
	kindCustom       = "custom/"
)

// Stream routing key kinds: an absolute file path is the key without its leading "/", with "%"
// escaped; every other kind starts with a "%" marker that no escaped path contains.
const (
	kindRelativePath = "%rel/"
	kindContainer    = "%pod/"
	kindType         = "%type/"
	// unitSuffix follows a path key when the resource names the systemd unit its records came
	// from (the journal: one stream per unit of a journal file and node).
	unitSuffix = "%unit/"
)

// Fallback reasons, reported when a rule could not be used for a record.
const (
	ReasonNamespaceUIDMissing  = "namespace_uid_missing"
	ReasonNamespaceNameMissing = "namespace_name_missing"
	ReasonOptionalInvalid      = "optional_invalid"
	ReasonStreamKeyMissing     = "stream_key_missing"
)

// Matcher matches a record when attribute Key (resource, then the record when Key is one of
// the configured record attributes) matches Pattern.
type Matcher struct {
	Key     string `mapstructure:"key"`
	Pattern string `mapstructure:"pattern"`
}

// Config configures a Router.
type Config struct {
	GroupBy                  GroupBy
	GroupByOptional          []string
	GroupPrefix              string
	GroupSeparator           string
	TypeAttribute            string
	InfrastructureNamespaces []string
	JournalMatchers          []Matcher
	AuditMatchers            []Matcher
	// StreamTemplate overrides the default "<host>.<routing key>" stream name.
	StreamTemplate string
	// Hostname is used when a record's resource names no host.
	Hostname string
	// RecordAttributes are the keys routing may read from a record when its resource lacks
	// them. Every other key is read from the resource only: the resource says where a line came
	// from, while record attributes can be written by the log line itself.
	RecordAttributes []string
}

// Route is the routing decision for one record.
type Route struct {
	Type   LogType
	Group  string
	Stream string
	// Fallbacks lists the rules that could not be used, in order (see the Reason constants).
	Fallbacks []string
	// GroupRewritten and StreamRewritten report a sanitized name.
	GroupRewritten, StreamRewritten bool
}

// Router routes records. It is safe for concurrent use.
type Router struct {
	cfg      Config
	template []templatePart
	// recordKeys are the keys lookup may read from a record.
	recordKeys map[string]bool

	mu      sync.Mutex
	streams map[streamKey]namePair // raw stream name inputs -> sanitized name
	groups  map[string]namePair    // raw group name -> sanitized name
}

type streamKey struct{ host, key, typ, tmpl string }

type namePair struct {
	name      string
	rewritten bool
}

// cacheLimit bounds the name caches; they are cleared when full.
const cacheLimit = 20_000

// New returns a Router for cfg.
func New(cfg Config) (*Router, error) {
	switch cfg.GroupBy {
	case "":
		cfg.GroupBy = ByLogType
	case ByLogType, ByNamespaceName, ByNamespaceUID:
	default:
		return nil, fmt.Errorf("group_by %q: want %q, %q or %q", cfg.GroupBy, ByLogType, ByNamespaceName, ByNamespaceUID)
	}
	for _, m := range append(append([]Matcher{}, cfg.JournalMatchers...), cfg.AuditMatchers...) {
		if m.Key == "" || m.Pattern == "" {
			return nil, errors.New("a matcher needs both key and pattern")
		}
	}
	tmpl, err := parseTemplate(cfg.StreamTemplate)
	if err != nil {
		return nil, err
	}
	r := &Router{cfg: cfg, template: tmpl, recordKeys: map[string]bool{}, streams: map[streamKey]namePair{}, groups: map[string]namePair{}}
	for _, k := range cfg.RecordAttributes {
		r.recordKeys[k] = true
	}
	return r, nil
}

// lookup returns attribute key from the resource, then (only for a key listed in
// RecordAttributes) from the record, as a string. The resource says where a record came from
// (its pod, namespace and file), which is what groups and streams are made of. A record
// attribute may come from the log line itself (a parser lifting key="value" pairs) or name
// the line's subject (object_ref), so by default it never chooses a destination.
func (r *Router) lookup(res pcommon.Map, rec recAttrs, key string) (string, bool) {
	if v, ok := res.Get(key); ok {
		return v.AsString(), true
	}
	if r.recordKeys[key] {
		if v, ok := rec.Get(key); ok {
			return v.AsString(), true
		}
	}
	return "", false
}

func (r *Router) matchAny(ms []Matcher, res pcommon.Map, rec recAttrs) bool {
	for _, m := range ms {
		if v, ok := r.lookup(res, rec, m.Key); ok && globMatch(m.Pattern, v) {
			return true
		}
	}
	return false
}

// Type returns the log type of a record.
func (r *Router) Type(res, rec pcommon.Map) LogType { return r.logType(res, recAttrs{m: rec}) }

func (r *Router) logType(res pcommon.Map, rec recAttrs) LogType {
	if r.cfg.TypeAttribute != "" {
		if v, ok := r.lookup(res, rec, r.cfg.TypeAttribute); ok {
			switch t := LogType(v); t {
			case Application, Infrastructure, Audit:
				return t
			}
		}
	}
	if r.matchAny(r.cfg.AuditMatchers, res, rec) {
		return Audit
	}
	if r.matchAny(r.cfg.JournalMatchers, res, rec) {
		return Infrastructure
	}
	if ns, ok := r.lookup(res, rec, attr.K8sNamespaceName); ok {
		for _, p := range r.cfg.InfrastructureNamespaces {
			if globMatch(p, ns) {
				return Infrastructure
			}
		}
	}
	return Application
}

// Route returns the routing decision for a record with resource attributes res and record
// attributes rec.
func (r *Router) Route(res, rec pcommon.Map) Route { return r.route(res, recAttrs{m: rec}) }

func (r *Router) route(res pcommon.Map, rec recAttrs) Route {
	var rt Route
	rt.Type = r.logType(res, rec)
	key := r.groupKey(res, rec, &rt)
	raw := key
	if r.cfg.GroupPrefix != "" {
		raw = r.cfg.GroupPrefix + r.cfg.GroupSeparator + key
	}
	g := r.cachedGroup(raw)
	rt.Group, rt.GroupRewritten = g.name, g.rewritten
	s := r.stream(res, rec, &rt)
	rt.Stream, rt.StreamRewritten = s.name, s.rewritten
	return rt
}

func (r *Router) groupKey(res pcommon.Map, rec recAttrs, rt *Route) string {
	for _, k := range r.cfg.GroupByOptional {
		v, ok := r.lookup(res, rec, k)
		if !ok || v == "" {
			continue
		}
		if naming.KeepsGroup(kindCustom + v) {
			return kindCustom + v
		}
		rt.Fallbacks = append(rt.Fallbacks, ReasonOptionalInvalid)
	}
	if rt.Type != Application {
		return string(rt.Type)
	}
	switch r.cfg.GroupBy {
	case ByNamespaceUID:
		if v, ok := r.lookup(res, rec, attr.NamespaceUID); ok && v != "" {
			return kindNamespaceUID + v
		}
		rt.Fallbacks = append(rt.Fallbacks, ReasonNamespaceUIDMissing)
		fallthrough
	case ByNamespaceName:
		if v, ok := r.lookup(res, rec, attr.K8sNamespaceName); ok && v != "" {
			return kindNamespace + v
		}
		rt.Fallbacks = append(rt.Fallbacks, ReasonNamespaceNameMissing)
	}
	return string(rt.Type)
}

func (r *Router) cachedGroup(raw string) namePair {
	return cached(&r.mu, r.groups, raw, func() namePair {
		name, changed := naming.Group(raw)
		return namePair{name: name, rewritten: changed}
	})
}

// cached returns m[k], computing and storing it on a miss; m is cleared when it reaches
// cacheLimit entries.
func cached[K comparable](mu *sync.Mutex, m map[K]namePair, k K, compute func() namePair) namePair {
	mu.Lock()
	defer mu.Unlock()
	if p, ok := m[k]; ok {
		return p
	}
	p := compute()
	if len(m) >= cacheLimit {
		clear(m)
	}
	m[k] = p
	return p
}

// host returns the host part of the stream name, with "%" and "/" escaped so that the first
// "/" of a stream name always ends the host.
func (r *Router) host(res pcommon.Map) string {
	for _, k := range []string{attr.HostName, attr.K8sNodeName} {
		if v, ok := res.Get(k); ok && v.AsString() != "" {
			return hostEscaper.Replace(v.AsString())
		}
	}
	return hostEscaper.Replace(r.cfg.Hostname)
}

var (
	hostEscaper = strings.NewReplacer("%", "%25", "/", "%2F")
	pathEscaper = strings.NewReplacer("%", "%25")
	partEscaper = strings.NewReplacer("%", "%25", "_", "%5F")
)

// containerKeys are the parts of a container log path, in path order.
var containerKeys = [...]string{
	attr.K8sNamespaceName, attr.K8sPodName, attr.K8sPodUID, attr.K8sContainerName, attr.K8sContainerRestartCount,
}

// Key returns the part of the stream name that identifies the record's source file, reading
// only the resource (and the record attributes cfg lists).
func (r *Router) Key(res, rec pcommon.Map) (string, bool) { return r.routingKey(res, recAttrs{m: rec}) }

// routingKey is injective over its inputs: an absolute path maps to itself without the
// leading "/" and with "%" escaped, so it contains no "%" that is not "%25"; every other kind
// starts with its own "%" marker, and a unit follows a path after the "%unit/" marker, which
// no escaped path or unit contains. The container kind always has all five parts, each with
// "%" and "_" escaped, so a missing part cannot shift another into its place.
func (r *Router) routingKey(res pcommon.Map, rec recAttrs) (string, bool) {
	if p, ok := r.lookup(res, rec, attr.LogFilePath); ok && p != "" {
		key := kindRelativePath + pathEscaper.Replace(p)
		if rest, abs := strings.CutPrefix(p, "/"); abs {
			key = pathEscaper.Replace(rest)
		}
		// The unit is read from the resource only: the journal receiver sets it from the
		// entry's _SYSTEMD_UNIT, a field journald writes itself; a record attribute of that
		// name is content.
		if u, ok := res.Get(attr.JournalUnit); ok && u.Type() == pcommon.ValueTypeStr && u.Str() != "" {
			key += unitSuffix + pathEscaper.Replace(u.Str())
		}
		return key, true
	}
	var parts [len(containerKeys)]string
	found := false
	for i, k := range containerKeys {
		if v, ok := r.lookup(res, rec, k); ok && v != "" {
			parts[i] = partEscaper.Replace(v)
			found = true
		}
	}
	if !found {
		return "", false
	}
	return kindContainer + strings.Join(parts[:], "_"), true
}

func (r *Router) stream(res pcommon.Map, rec recAttrs, rt *Route) namePair {
	host := r.host(res)
	key, ok := r.routingKey(res, rec)
	if !ok {
		rt.Fallbacks = append(rt.Fallbacks, ReasonStreamKeyMissing)
		key = kindType + string(rt.Type)
	}
	var tmpl string
	if r.template != nil {
		tmpl = r.expandTemplate(res, rec, host, key, rt.Type)
	}
	sk := streamKey{host: host, key: key, typ: string(rt.Type), tmpl: tmpl}
	return cached(&r.mu, r.streams, sk, func() namePair {
		raw := tmpl
		if r.template == nil {
			raw = host + "/" + key
		}
		name, changed := naming.Stream(raw)
		return namePair{name: name, rewritten: changed}
	})
}
