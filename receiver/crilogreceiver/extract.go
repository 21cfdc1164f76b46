// SPDX-License-Identifier: Apache-2.0

package crilogreceiver

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/podmeta"
)

// k8sNamespaceUIDKey is how extract.metadata names the namespace uid (as k8s_attributes does);
// it is written as attr.NamespaceUID, the project's own name.
const k8sNamespaceUIDKey = "k8s.namespace.uid"

// metadataFields are the extract.metadata names and how each is read from a Pod.
var metadataFields = map[string]struct {
	attr string
	get  func(p *podmeta.Pod) string
}{
	attr.K8sNodeName:        {attr.K8sNodeName, func(p *podmeta.Pod) string { return p.NodeName }},
	k8sNamespaceUIDKey:      {attr.NamespaceUID, func(p *podmeta.Pod) string { return p.NamespaceUID }},
	attr.K8sDeploymentName:  {attr.K8sDeploymentName, ownerName(podmeta.KindDeployment)},
	attr.K8sReplicaSetName:  {attr.K8sReplicaSetName, ownerName(podmeta.KindReplicaSet)},
	attr.K8sStatefulSetName: {attr.K8sStatefulSetName, ownerName(podmeta.KindStatefulSet)},
	attr.K8sDaemonSetName:   {attr.K8sDaemonSetName, ownerName(podmeta.KindDaemonSet)},
	attr.K8sJobName:         {attr.K8sJobName, ownerName(podmeta.KindJob)},
	attr.K8sCronJobName:     {attr.K8sCronJobName, ownerName(podmeta.KindCronJob)},
}

func ownerName(kind string) func(*podmeta.Pod) string {
	return func(p *podmeta.Pod) string { return p.Owner(kind) }
}

func defaultExtractMetadata() []string {
	return []string{
		attr.K8sNodeName, attr.K8sDeploymentName, attr.K8sStatefulSetName, attr.K8sDaemonSetName,
		attr.K8sJobName, attr.K8sCronJobName,
	}
}

// Sources of a label or annotation.
const (
	fromPod       = "pod"
	fromNamespace = "namespace"
)

func (x *ExtractConfig) validate() []error {
	var errs []error
	for i, m := range x.Metadata {
		if _, ok := metadataFields[m]; !ok {
			errs = append(errs, fmt.Errorf("extract.metadata[%d]: %q is not supported", i, m))
		}
	}
	check := func(kind string, list []FieldExtractConfig, namespaceOK bool) {
		for i, f := range list {
			if f.Key == "" {
				errs = append(errs, fmt.Errorf("extract.%s[%d]: key is required", kind, i))
			}
			switch f.From {
			case "", fromPod:
			case fromNamespace:
				if !namespaceOK {
					errs = append(errs, fmt.Errorf("extract.%s[%d]: from %q is not supported (pod only)", kind, i, f.From))
				}
			default:
				errs = append(errs, fmt.Errorf("extract.%s[%d]: from %q: must be pod or namespace", kind, i, f.From))
			}
		}
	}
	check("labels", x.Labels, true)
	check("annotations", x.Annotations, false)
	return errs
}

// extractor writes the configured attributes of a Pod into a resource.
type extractor struct {
	fields []extractField
}

type extractField struct {
	name string
	get  func(p *podmeta.Pod) string
}

func newExtractor(x ExtractConfig) *extractor {
	e := &extractor{}
	for _, m := range x.Metadata {
		f := metadataFields[m]
		e.fields = append(e.fields, extractField{name: f.attr, get: f.get})
	}
	for _, l := range x.Labels {
		key := l.Key
		if l.From == fromNamespace {
			e.fields = append(e.fields, extractField{
				name: tagName(l.TagName, attr.K8sNamespaceLabelsPrefix, key),
				get:  func(p *podmeta.Pod) string { return p.NamespaceLabels[key] },
			})
			continue
		}
		e.fields = append(e.fields, extractField{
			name: tagName(l.TagName, attr.K8sPodLabelsPrefix, key),
			get:  func(p *podmeta.Pod) string { return p.Labels[key] },
		})
	}
	for _, a := range x.Annotations {
		key := a.Key
		e.fields = append(e.fields, extractField{
			name: tagName(a.TagName, attr.K8sPodAnnotationsPrefix, key),
			get:  func(p *podmeta.Pod) string { return p.Annotations[key] },
		})
	}
	return e
}

func tagName(configured, prefix, key string) string {
	if configured != "" {
		return configured
	}
	return prefix + key
}

// copyTo writes p's configured attributes into dst; absent values are not written.
func (e *extractor) copyTo(p *podmeta.Pod, dst pcommon.Map) {
	for _, f := range e.fields {
		if v := f.get(p); v != "" {
			dst.PutStr(f.name, v)
		}
	}
}
