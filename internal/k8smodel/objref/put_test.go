// SPDX-License-Identifier: Apache-2.0

package objref

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
)

// PutCount is exactly what Put adds to an empty map.
func TestPutCount(t *testing.T) {
	tests := []struct {
		name string
		set  attr.ObjectSet
		ref  Ref
		want int
	}{
		{name: "empty", set: attr.Subject, ref: Ref{}, want: 0},
		{name: "name only", set: attr.Subject, ref: Ref{Name: "web-1"}, want: 1},
		{name: "pod", set: attr.Subject, ref: Ref{Kind: "Pod", APIVersion: "v1", Namespace: "shop", Name: "web-1"}, want: 4},
		{
			name: "every field", set: attr.Subject,
			ref:  Ref{Kind: "Pod", APIVersion: "v1", Namespace: "shop", Name: "web-1", UID: "u", FieldPath: "spec", ResourceVersion: "7"},
			want: 7,
		},
		{
			name: "related: no resource version", set: attr.Related,
			ref:  Ref{Kind: "Pod", APIVersion: "v1", Namespace: "shop", Name: "web-1", UID: "u", FieldPath: "spec", ResourceVersion: "7"},
			want: 6,
		},
		{name: "a set without a field", set: attr.ObjectSet{Kind: "k", Name: "n"}, ref: Ref{Kind: "Pod", Namespace: "shop", Name: "web-1"}, want: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PutCount(tt.set, tt.ref); got != tt.want {
				t.Errorf("PutCount = %d, want %d", got, tt.want)
			}
			m := pcommon.NewMap()
			Put(m, tt.set, tt.ref)
			if m.Len() != tt.want {
				t.Errorf("Put wrote %d attributes, want %d", m.Len(), tt.want)
			}
		})
	}
}
