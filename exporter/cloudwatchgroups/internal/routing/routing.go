// Package routing decides, for one log record, its log type, its CloudWatch Logs group and its
// log stream, as described in the component's design.md.
package routing

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroups/internal/naming"
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

// Attribute keys read by the router (OpenTelemetry semantic conventions).
const (
	AttrNamespaceName = "k8s.namespace.name"
	AttrNamespaceUID  = "k8s.namespace.uid"
	AttrPodName       = "k8s.pod.name"
	AttrPodUID        = "k8s.pod.uid"
	AttrContainerName = "k8s.container.name"
	AttrRestartCount  = "k8s.container.restart_count"
	AttrFilePath      = "log.file.path"
	AttrHostName      = "host.name"
	AttrNodeName      = "k8s.node.name"
)

// Fallback reasons, reported when a rule could not be used for a record.
const (
	ReasonNamespaceUIDMissing  = "namespace_uid_missing"
	ReasonNamespaceNameMissing = "namespace_name_missing"
	ReasonOptionalInvalid      = "optional_invalid"
	ReasonStreamKeyMissing     = "stream_key_missing"
)

// Matcher matches a record when attribute Key (record first, then resource) matches Pattern.
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
	// NamespaceUID, when set, maps a namespace name to its UID for records without
	// k8s.namespace.uid (group_by namespace_uid).
	NamespaceUID func(name string) (string, bool)
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
	return &Router{cfg: cfg, template: tmpl, streams: map[streamKey]namePair{}, groups: map[string]namePair{}}, nil
}

// lookup returns attribute key from the resource, then the record, as a string. The resource
// says where a record came from (its pod, namespace and file), which is what groups and
// streams are made of; a record attribute of the same name may describe something else, such
// as the object a log line is about (object_ref writes k8s.pod.name and k8s.namespace.name for
// the subject of a kube-scheduler line).
func lookup(res pcommon.Map, rec recAttrs, key string) (string, bool) {
	if v, ok := res.Get(key); ok {
		return v.AsString(), true
	}
	if v, ok := rec.Get(key); ok {
		return v.AsString(), true
	}
	return "", false
}

func matchAny(ms []Matcher, res pcommon.Map, rec recAttrs) bool {
	for _, m := range ms {
		if v, ok := lookup(res, rec, m.Key); ok && globMatch(m.Pattern, v) {
			return true
		}
	}
	return false
}

// Type returns the log type of a record.
func (r *Router) Type(res, rec pcommon.Map) LogType { return r.logType(res, recAttrs{m: rec}) }

func (r *Router) logType(res pcommon.Map, rec recAttrs) LogType {
	if r.cfg.TypeAttribute != "" {
		if v, ok := lookup(res, rec, r.cfg.TypeAttribute); ok {
			switch t := LogType(v); t {
			case Application, Infrastructure, Audit:
				return t
			}
		}
	}
	if matchAny(r.cfg.AuditMatchers, res, rec) {
		return Audit
	}
	if matchAny(r.cfg.JournalMatchers, res, rec) {
		return Infrastructure
	}
	if ns, ok := lookup(res, rec, AttrNamespaceName); ok {
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
		v, ok := lookup(res, rec, k)
		if !ok || v == "" {
			continue
		}
		if naming.ValidGroup(v) {
			return v
		}
		rt.Fallbacks = append(rt.Fallbacks, ReasonOptionalInvalid)
	}
	if rt.Type != Application {
		return string(rt.Type)
	}
	switch r.cfg.GroupBy {
	case ByNamespaceUID:
		if v, ok := lookup(res, rec, AttrNamespaceUID); ok && v != "" {
			return v
		}
		if r.cfg.NamespaceUID != nil {
			if ns, ok := lookup(res, rec, AttrNamespaceName); ok && ns != "" {
				if uid, ok := r.cfg.NamespaceUID(ns); ok && uid != "" {
					return uid
				}
			}
		}
		rt.Fallbacks = append(rt.Fallbacks, ReasonNamespaceUIDMissing)
		fallthrough
	case ByNamespaceName:
		if v, ok := lookup(res, rec, AttrNamespaceName); ok && v != "" {
			return v
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

// host returns the host part of the stream name.
func (r *Router) host(res pcommon.Map) string {
	for _, k := range []string{AttrHostName, AttrNodeName} {
		if v, ok := res.Get(k); ok && v.AsString() != "" {
			return v.AsString()
		}
	}
	return r.cfg.Hostname
}

// Key returns the part of the stream name that identifies the record's source file.
func Key(res, rec pcommon.Map) (string, bool) { return routingKey(res, recAttrs{m: rec}) }

func routingKey(res pcommon.Map, rec recAttrs) (string, bool) {
	if p, ok := lookup(res, rec, AttrFilePath); ok && p != "" {
		return strings.ReplaceAll(strings.TrimLeft(p, "/"), "/", "."), true
	}
	var parts []string
	for _, k := range []string{AttrNamespaceName, AttrPodName, AttrPodUID, AttrContainerName, AttrRestartCount} {
		if v, ok := lookup(res, rec, k); ok && v != "" {
			parts = append(parts, v)
		}
	}
	if len(parts) == 0 {
		return "", false
	}
	return strings.Join(parts, "_"), true
}

func (r *Router) stream(res pcommon.Map, rec recAttrs, rt *Route) namePair {
	host := r.host(res)
	key, ok := routingKey(res, rec)
	if !ok {
		rt.Fallbacks = append(rt.Fallbacks, ReasonStreamKeyMissing)
		key = string(rt.Type)
	}
	var tmpl string
	if r.template != nil {
		tmpl = r.expandTemplate(res, rec, host, key, rt.Type)
	}
	sk := streamKey{host: host, key: key, typ: string(rt.Type), tmpl: tmpl}
	return cached(&r.mu, r.streams, sk, func() namePair {
		raw := tmpl
		if r.template == nil {
			raw = host + "." + key
		}
		name, changed := naming.Stream(raw)
		return namePair{name: name, rewritten: changed}
	})
}
