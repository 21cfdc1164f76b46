// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"cmp"
	"errors"
	"slices"
	"sort"
	"strings"
)

// kubeExtensions and kubeReceivers are the component types of the node configuration that watch
// the Kubernetes API.
var (
	kubeExtensions = []string{"trace_context", "pod_metadata"}
	kubeReceivers  = []string{"kube_lifecycle"}
)

func isType(id string, types []string) bool {
	typ, _, _ := strings.Cut(id, "/")
	return slices.Contains(types, typ)
}

// localizeKube points the components that watch the cluster at l.Kubeconfig, or leaves them
// out (with object_ref's reference to trace_context and every pipeline left without a
// receiver) when there is none; otlp_http exporters send to l.TracesEndpoint.
func (s *Shipped) localizeKube(cfg map[string]any, l Local) error {
	exts, _ := cfg["extensions"].(map[string]any)
	recvs, _ := cfg["receivers"].(map[string]any)
	service, _ := cfg["service"].(map[string]any)
	pipelines, _ := service["pipelines"].(map[string]any)
	if l.Kubeconfig != "" {
		for _, sec := range []struct {
			m     map[string]any
			types []string
			kind  string
		}{{exts, kubeExtensions, "extensions"}, {recvs, kubeReceivers, "receivers"}} {
			for id, v := range sec.m {
				if !isType(id, sec.types) {
					continue
				}
				c, _ := v.(map[string]any)
				if c == nil {
					c = map[string]any{}
					sec.m[id] = c
				}
				c["kubeconfig"] = l.Kubeconfig
				s.note("%s::%s::kubeconfig = the test's API server", sec.kind, id)
			}
		}
	} else {
		var dropped []string
		for id := range exts {
			if isType(id, kubeExtensions) {
				delete(exts, id)
				dropped = append(dropped, "extensions::"+id)
			}
		}
		for id := range recvs {
			if isType(id, kubeReceivers) {
				delete(recvs, id)
				dropped = append(dropped, "receivers::"+id)
			}
		}
		if list, ok := service["extensions"].([]any); ok {
			service["extensions"] = slices.DeleteFunc(list, func(v any) bool { id, _ := v.(string); return isType(id, kubeExtensions) })
		}
		for id, v := range recvs {
			if c, ok := v.(map[string]any); ok && isType(id, []string{"cri_log"}) {
				if _, has := c["pod_metadata"]; has {
					delete(c, "pod_metadata")
					s.note("receivers::%s::pod_metadata left out: no pod_metadata extension", id)
				}
			}
		}
		procs, _ := cfg["processors"].(map[string]any)
		for id, v := range procs {
			if c, ok := v.(map[string]any); ok && isType(id, []string{"object_ref"}) {
				if _, has := c["trace_context"]; has {
					delete(c, "trace_context")
					s.note("processors::%s::trace_context left out: no trace_context extension", id)
				}
				if _, has := c["own_pod"]; has {
					delete(c, "own_pod") // the Pods' own contexts come from trace_context too
					s.note("processors::%s::own_pod left out: no trace_context extension", id)
				}
			}
		}
		for name, p := range pipelines {
			pm, _ := p.(map[string]any)
			list, _ := pm["receivers"].([]any)
			pm["receivers"] = slices.DeleteFunc(list, func(v any) bool { id, _ := v.(string); return isType(id, kubeReceivers) })
			if rest := pm["receivers"].([]any); len(rest) < len(list) && !slices.ContainsFunc(rest, func(v any) bool { id, _ := v.(string); return !isType(id, []string{"otlp"}) }) {
				// Only the node's components' own spans would be left: a local run has none.
				pm["receivers"] = []any{}
			}
			if len(pm["receivers"].([]any)) == 0 {
				delete(pipelines, name)
				dropped = append(dropped, "pipelines::"+name)
			}
		}
		sort.Strings(dropped)
		for _, d := range dropped {
			s.note("%s left out: it needs a Kubernetes API server", d)
		}
	}
	s.localizeOTLP(recvs, pipelines, l.OTLPHTTPAddr)
	exps, _ := cfg["exporters"].(map[string]any)
	for id, v := range exps {
		if !isType(id, []string{"otlp_http"}) {
			continue
		}
		used := false
		for _, p := range pipelines {
			pm, _ := p.(map[string]any)
			list, _ := pm["exporters"].([]any)
			used = used || slices.Contains(list, any(id))
		}
		if !used {
			delete(exps, id)
			s.note("exporters::%s left out: no pipeline uses it", id)
			continue
		}
		if l.TracesEndpoint == "" {
			return errors.New("exporters::" + id + ": TracesEndpoint is required when a traces pipeline is kept")
		}
		c, _ := v.(map[string]any)
		if c == nil {
			c = map[string]any{}
			exps[id] = c
		}
		c["endpoint"] = l.TracesEndpoint
		s.note("exporters::%s::endpoint = the test's OTLP/HTTP sink", id)
	}
	return nil
}

// localizeOTLP leaves out the otlp receivers no pipeline uses any more and moves the others'
// endpoints off the shipped fixed ports (several collectors share one machine): gRPC to a free
// port, HTTP to httpAddr (a free port when empty).
func (s *Shipped) localizeOTLP(recvs, pipelines map[string]any, httpAddr string) {
	for id, v := range recvs {
		if !isType(id, []string{"otlp"}) {
			continue
		}
		used := false
		for _, p := range pipelines {
			pm, _ := p.(map[string]any)
			list, _ := pm["receivers"].([]any)
			used = used || slices.Contains(list, any(id))
		}
		if !used {
			delete(recvs, id)
			s.note("receivers::%s left out: no pipeline uses it", id)
			continue
		}
		c, _ := v.(map[string]any)
		protocols, _ := c["protocols"].(map[string]any)
		if g, ok := protocols["grpc"].(map[string]any); ok {
			g["endpoint"] = "127.0.0.1:0"
			s.note("receivers::%s::protocols::grpc::endpoint = a free local port", id)
		}
		if h, ok := protocols["http"].(map[string]any); ok {
			h["endpoint"] = cmp.Or(httpAddr, "127.0.0.1:0")
			s.note("receivers::%s::protocols::http::endpoint = the test's address", id)
		}
	}
}
