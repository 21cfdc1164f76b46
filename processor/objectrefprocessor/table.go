// SPDX-License-Identifier: Apache-2.0

package objectrefprocessor

import (
	"fmt"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objref"
)

// builtinKeys is the default key table, in subject-priority order: the keys Kubernetes
// components log references under, then the generic keys whose kind comes from elsewhere.
var builtinKeys = []KeyConfig{
	{Key: "pod", Kind: "Pod"},
	{Key: "node", Kind: "Node"},
	{Key: "namespace", Kind: "Namespace"},
	{Key: "deployment", Kind: "Deployment"},
	{Key: "replicaSet", Kind: "ReplicaSet"},
	{Key: "statefulSet", Kind: "StatefulSet"},
	{Key: "daemonSet", Kind: "DaemonSet"},
	{Key: "job", Kind: "Job"},
	{Key: "cronJob", Kind: "CronJob"},
	{Key: "service", Kind: "Service"},
	{Key: "endpoints", Kind: "Endpoints"},
	{Key: "endpointSlice", Kind: "EndpointSlice"},
	{Key: "pvc", Kind: "PersistentVolumeClaim"},
	{Key: "persistentVolumeClaim", Kind: "PersistentVolumeClaim"},
	{Key: "pv", Kind: "PersistentVolume"},
	{Key: "persistentVolume", Kind: "PersistentVolume"},
	{Key: "configMap", Kind: "ConfigMap"},
	{Key: "lease", Kind: "Lease"},
	{Key: "ingress", Kind: "Ingress"},
	{Key: "portName", Kind: "Service"},
	{Key: "servicePortName", Kind: "Service"},
	{Key: "pods", Kind: "Pod", List: true},
	{Key: "nodes", Kind: "Node", List: true},
	{Key: "object", KindKey: "kind"},
	{Key: "regarding"},
	{Key: "involvedObject"},
	{Key: "related", Subject: boolPtr(false)},
}

func boolPtr(b bool) *bool { return &b }

// keyInfo is one resolved row of the key table.
type keyInfo struct {
	key string
	// kind is the kind the key always names, or "".
	kind    string
	subject bool
	list    bool
	// related marks the key of an event's related object, written as attr.Related.
	// siblings are the sibling keys as found in the attributes (with the key prefix) and in
	// the body (without).
	attrSiblings, bodySiblings siblingKeys
	// sibSlots are the siblings' slots in a record's sibling scratch (-1: not configured); a
	// sibling has one slot, whether read from the attributes or the body.
	sibSlots siblingSlots
	related  bool
}

// siblingSlots are the slots of one key's siblings, -1 when not configured.
type siblingSlots struct {
	kind, namespace, uid int
}

// siblingKeys are the keys read next to a reference; empty when not configured.
type siblingKeys struct {
	kind, namespace, uid string
}

func (s siblingKeys) withPrefix(prefix string) siblingKeys {
	add := func(k string) string {
		if k == "" {
			return ""
		}
		return prefix + k
	}
	return siblingKeys{add(s.kind), add(s.namespace), add(s.uid)}
}

// table is the resolved key and kind tables.
type table struct {
	keys  []keyInfo
	index keySet // key -> position in keys, without the prefix
	// prefix is the configured key_prefix; keys and siblings in attributes carry it.
	prefix string
	kinds  *objref.Table
	// attrRoles and bodyRoles map an attribute (body) key to its position in roles: what the
	// key is to the processor, answered by one filtered lookup per key.
	attrRoles, bodyRoles keySet
	roles                []role
	// siblingSlots maps a sibling key (without the prefix) to its slot.
	siblingSlots map[string]int
}

// role is what one attribute or body key is to the processor; a key may be several at once
// (`namespace` is both a reference key and every key's namespace sibling).
type role struct {
	key     int // position in the key table, or -1
	sibling int // sibling slot, or -1
	// output says which attribute the processor writes this is, if any.
	output output
}

// output is an attribute the processor writes, found already on a record.
type output uint8

const (
	outNone output = iota
	outSubject
	outRelated
	outRefs
)

// roleFor returns the role of key in set, adding an empty one when there is none.
func (t *table) roleFor(set *keySet, key string) *role {
	if i, ok := set.get(key); ok {
		return &t.roles[i]
	}
	set.add(key, len(t.roles))
	t.roles = append(t.roles, role{key: -1, sibling: -1})
	return &t.roles[len(t.roles)-1]
}

// siblingSlot returns the slot of a sibling key, -1 for none, registering it in both role sets.
func (t *table) siblingSlot(key string) int {
	if key == "" {
		return -1
	}
	if slot, ok := t.siblingSlots[key]; ok {
		return slot
	}
	slot := len(t.siblingSlots)
	t.siblingSlots[key] = slot
	t.roleFor(&t.attrRoles, t.prefix+key).sibling = slot
	t.roleFor(&t.bodyRoles, key).sibling = slot
	return slot
}

// keySet maps strings to ints behind a cheap filter, as most attribute keys looked up are not
// in the set: bit n of filter[i] is set when a member is n bytes long and its first, middle and
// last bytes give index i (see filterIndex). Only a key passing the filter is hashed.
type keySet struct {
	m      map[string]int
	filter [1 << filterBits]uint64
	long   bool // a member is 64 bytes or longer, which the filter cannot represent
}

const filterBits = 10

// filterIndex mixes a key's first, middle and last bytes into a filter index.
func filterIndex(key string) int {
	return (int(key[0])*961 + int(key[len(key)/2])*31 + int(key[len(key)-1])) & (1<<filterBits - 1)
}

func (s *keySet) add(key string, v int) {
	if s.m == nil {
		s.m = map[string]int{}
	}
	if key == "" {
		return
	}
	s.m[key] = v
	if len(key) >= 64 {
		s.long = true
	} else {
		s.filter[filterIndex(key)] |= 1 << len(key)
	}
}

func (s *keySet) has(key string) bool {
	_, ok := s.get(key)
	return ok
}

func (s *keySet) get(key string) (int, bool) {
	switch {
	case len(key) == 0:
		return 0, false
	case !s.mayHave(key):
		return 0, false
	}
	v, ok := s.m[key]
	return v, ok
}

// mayHave reports whether the filter lets a non-empty key through to the map.
func (s *keySet) mayHave(key string) bool {
	if len(key) >= 64 {
		return s.long
	}
	return s.filter[filterIndex(key)]&(1<<len(key)) != 0
}

// buildTable merges the configuration over the built-in tables.
func buildTable(cfg *Config) (*table, error) {
	extra := make([]objref.Kind, 0, len(cfg.Kinds))
	for i, k := range cfg.Kinds {
		group, version, ok := objref.SplitAPIVersion(k.APIVersion)
		if !ok {
			return nil, fmt.Errorf("kinds[%d]: api_version %q is not group/version", i, k.APIVersion)
		}
		extra = append(extra, objref.Kind{Kind: k.Kind, Group: group, Version: version, Namespaced: k.Namespaced, Names: objref.PathSegment})
	}
	t := &table{kinds: objref.NewTable(extra...), prefix: cfg.KeyPrefix, siblingSlots: map[string]int{}}

	excluded := make(map[string]bool, len(cfg.ExcludeKeys))
	for _, k := range cfg.ExcludeKeys {
		excluded[k] = true
	}
	add := func(k KeyConfig) error {
		if excluded[k.Key] {
			return nil
		}
		if t.index.has(k.Key) {
			return nil // a configured entry overrides the built-in one with the same key
		}
		ki := keyInfo{key: k.Key, kind: k.Kind, subject: !k.List, list: k.List, related: k.Key == "related"}
		sib := siblingKeys{kind: k.KindKey, namespace: "namespace", uid: k.Key + "UID"}
		if k.Kind != "" && t.kinds.Lookup("", k.Kind) == nil {
			return fmt.Errorf("key %q: kind %q is not in the kind table; add it under kinds", k.Key, k.Kind)
		}
		if k.NamespaceKey != nil {
			sib.namespace = *k.NamespaceKey
		}
		if k.UIDKey != nil {
			sib.uid = *k.UIDKey
		}
		ki.bodySiblings = sib
		ki.attrSiblings = sib.withPrefix(cfg.KeyPrefix)
		if k.Subject != nil {
			ki.subject = *k.Subject
		}
		t.index.add(k.Key, len(t.keys))
		t.keys = append(t.keys, ki)
		return nil
	}
	for _, k := range cfg.Keys {
		if err := add(k); err != nil {
			return nil, err
		}
	}
	for _, k := range builtinKeys {
		if err := add(k); err != nil {
			return nil, err
		}
	}
	t.buildRoles()
	return t, nil
}

// buildRoles fills the role sets: reference keys, sibling keys and subject attribute names.
func (t *table) buildRoles() {
	for i := range t.keys {
		k := &t.keys[i]
		t.roleFor(&t.attrRoles, t.prefix+k.key).key = i
		t.roleFor(&t.bodyRoles, k.key).key = i
	}
	for i := range t.keys {
		k := &t.keys[i]
		k.sibSlots = siblingSlots{
			kind:      t.siblingSlot(k.bodySiblings.kind),
			namespace: t.siblingSlot(k.bodySiblings.namespace),
			uid:       t.siblingSlot(k.bodySiblings.uid),
		}
	}
	t.roleFor(&t.attrRoles, attr.Subject.Name).output = outSubject
	t.roleFor(&t.attrRoles, attr.Related.Name).output = outRelated
	t.roleFor(&t.attrRoles, attr.ObjectRefs).output = outRefs
}

// lookup returns the key table position of an attribute key, or -1.
func (t *table) lookup(key string) int {
	if i, ok := t.index.get(key); ok {
		return i
	}
	return -1
}
