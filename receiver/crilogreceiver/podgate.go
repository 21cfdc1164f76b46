// SPDX-License-Identifier: Apache-2.0

package crilogreceiver

import (
	"path/filepath"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/podmeta"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver/internal/podpath"
)

// podGate decides whether a container's log file is read, from its path (the namespace in it)
// and its Pod's metadata (design.md, "Pod metadata and opt-out"). Log content never takes part.
type podGate struct {
	include, exclude []string
	// src is the Pod metadata source; nil without pod_metadata.
	src podmeta.Source
}

// active reports whether the gate can leave out any file.
func (g *podGate) active() bool {
	return g.src != nil || len(g.include) > 0 || len(g.exclude) > 0
}

// skip reports whether a matched path must not be opened: its namespace is not selected, or its
// Pod is known and opted out. A Pod the source does not know yet is not skipped: its file is
// opened and held (criReceiver.admit).
func (g *podGate) skip(path string) bool {
	meta, ok := podpath.Parse(path)
	if !ok {
		return false
	}
	p, known := g.pod(meta)
	ns := meta.Namespace
	if ns == "" && known {
		ns = p.Namespace // the older layout names only the Pod's uid
	}
	if ns != "" && !g.namespaceSelected(ns) {
		return true
	}
	return known && p.Excluded
}

// namespaceSelected applies namespaces.include and namespaces.exclude.
func (g *podGate) namespaceSelected(ns string) bool {
	if len(g.include) > 0 && !matchAny(g.include, ns) {
		return false
	}
	return !matchAny(g.exclude, ns)
}

// pod returns the metadata of the Pod a path names, by uid, else by namespace and name.
func (g *podGate) pod(meta podpath.Meta) (*podmeta.Pod, bool) {
	switch {
	case g.src == nil:
		return nil, false
	case meta.PodUID != "":
		return g.src.PodByUID(meta.PodUID)
	case meta.Namespace != "" && meta.PodName != "":
		return g.src.PodByName(meta.Namespace, meta.PodName)
	}
	return nil, false
}

func matchAny(globs []string, s string) bool {
	for _, g := range globs {
		if ok, _ := filepath.Match(g, s); ok {
			return true
		}
	}
	return false
}
