// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"reflect"
	"testing"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/nodesim"
)

// memStore holds events by group and stream, in arrival order.
type memStore map[string]map[string][]localcloudwatch.Event

func (m memStore) Groups() []localcloudwatch.GroupInfo {
	var out []localcloudwatch.GroupInfo
	for g := range m {
		out = append(out, localcloudwatch.GroupInfo{Name: g})
	}
	return out
}

func (m memStore) Streams(group string) ([]localcloudwatch.StreamInfo, error) {
	var out []localcloudwatch.StreamInfo
	for s := range m[group] {
		out = append(out, localcloudwatch.StreamInfo{Name: s})
	}
	return out, nil
}

func (m memStore) Events(group, stream string) ([]localcloudwatch.Event, error) {
	return m[group][stream], nil
}

func ev(ts int64, msg string) localcloudwatch.Event {
	return localcloudwatch.Event{Timestamp: ts, Message: msg}
}

func TestReconcile(t *testing.T) {
	ledger := nodesim.Ledger{Containers: []nodesim.ContainerRecord{{ID: "c1", Lines: 3, Unstamped: []int64{3}}}}
	tests := []struct {
		name  string
		store memStore
		want  Account
		ok    bool
	}{
		{
			name:  "all in order",
			store: memStore{"g": {"s": {ev(1, "a nodesim:c1:1"), ev(2, "nodesim:c1:2"), ev(3, "nodesim:c1:3")}}},
			want:  Account{Written: 3, Stored: 3, Matched: 3},
			ok:    true,
		},
		{
			name:  "arrival inversion with ordered timestamps is fine",
			store: memStore{"g": {"s": {ev(2, "nodesim:c1:2"), ev(1, "nodesim:c1:1"), ev(3, "nodesim:c1:3")}}},
			want:  Account{Written: 3, Stored: 3, Matched: 3, ArrivalInversions: 1},
			ok:    true,
		},
		{
			name:  "missing and duplicated",
			store: memStore{"g": {"s": {ev(1, "nodesim:c1:1"), ev(1, "nodesim:c1:1"), ev(3, "nodesim:c1:3")}}},
			want:  Account{Written: 3, Stored: 3, Matched: 2, Missing: 1, Duplicated: 1},
		},
		{
			name:  "earlier timestamp is out of order",
			store: memStore{"g": {"s": {ev(5, "nodesim:c1:1"), ev(4, "nodesim:c1:2"), ev(6, "nodesim:c1:3")}}},
			want:  Account{Written: 3, Stored: 3, Matched: 3, OutOfOrder: 1, ArrivalInversions: 0},
		},
		{
			name:  "a line without a CRI header is left out of the order check",
			store: memStore{"g": {"s": {ev(1, "nodesim:c1:1"), ev(2, "nodesim:c1:2"), ev(0, "nodesim:c1:3")}}},
			want:  Account{Written: 3, Stored: 3, Matched: 3},
			ok:    true,
		},
		{
			name:  "merged, untracked and stray",
			store: memStore{"g": {"s": {ev(1, "nodesim:c1:1 nodesim:c1:2"), ev(2, "no token")}}, "h": {"s": {ev(3, "nodesim:c1:3")}}},
			want:  Account{Written: 3, Stored: 3, Matched: 2, Missing: 1, Merged: 1, Untracked: 1, StrayStreams: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Reconcile(tt.store, ledger)
			got.Examples = nil
			if tt.name == "merged, untracked and stray" {
				// Map order decides which of the two groups is seen first; the count is the same.
				got.ArrivalInversions = 0
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
			if got.OK() != tt.ok {
				t.Errorf("OK() = %v, want %v", got.OK(), tt.ok)
			}
		})
	}
}
