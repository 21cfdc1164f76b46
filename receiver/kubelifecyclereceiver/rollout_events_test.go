// SPDX-License-Identifier: Apache-2.0

package kubelifecyclereceiver

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objevents"
)

func TestScaledReplicaSet(t *testing.T) {
	t.Parallel()
	tests := []struct {
		note, want string
		ok         bool
	}{
		{"Scaled up replica set web-7d9f from 0 to 3", "web-7d9f", true},
		{"Scaled down replica set web-6c4b from 3 to 2", "web-6c4b", true},
		{"Scaled up replica set web-7d9f to 3", "web-7d9f", true}, // releases before "from"
		{"Scaled down replica set web-6c4b to 0", "web-6c4b", true},
		{"Scaled up replica set ", "", false},
		{"Scaled sideways replica set web to 1", "", false},
		{"Created pod: web-1", "", false},
		{"", "", false},
		{"Scaled up replica set " + strings.Repeat("a", 254) + " to 1", "", false},
	}
	for _, tt := range tests {
		got, ok := scaledReplicaSet(tt.note)
		assert.Equal(t, tt.ok, ok, tt.note)
		assert.Equal(t, tt.want, got, tt.note)
	}
}

func FuzzScaledReplicaSet(f *testing.F) {
	for _, s := range []string{"Scaled up replica set web-7d9f from 0 to 3", "Scaled down replica set x to 0", "Scaled up replica set  ", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, note string) {
		name, ok := scaledReplicaSet(note)
		if !ok {
			if name != "" {
				t.Fatalf("%q: a name without ok", note)
			}
			return
		}
		if name == "" || strings.Contains(name, " ") || len(name) > 253 || !strings.Contains(note, " "+name) {
			t.Fatalf("%q: bad name %q", note, name)
		}
	})
}

func TestRelevantEvents(t *testing.T) {
	t.Parallel()
	dep := objevents.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "web"}
	rs := objevents.Ref{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "ns", Name: "web-1"}
	pod := objevents.Ref{APIVersion: "v1", Kind: "Pod", Namespace: "ns", Name: "web-1-x"}
	tests := []struct {
		name string
		ev   objevents.Event
		want bool
	}{
		{"the Deployment controller's scaling", objevents.Event{Regarding: dep, Reason: reasonScaling, ReportingController: controllerDeployment}, true},
		{"scaling written by someone else", objevents.Event{Regarding: dep, Reason: reasonScaling, ReportingController: "kubectl"}, false},
		{"another reason on a Deployment", objevents.Event{Regarding: dep, Reason: "DeploymentRollback", ReportingController: controllerDeployment}, false},
		{"the ReplicaSet controller's create", objevents.Event{Regarding: rs, Reason: reasonSuccessfulCreate, ReportingController: controllerReplicaSet}, true},
		{"the ReplicaSet controller's delete", objevents.Event{Regarding: rs, Reason: reasonSuccessfulDelete, ReportingController: controllerReplicaSet}, true},
		{"a failed create", objevents.Event{Regarding: rs, Reason: "FailedCreate", ReportingController: controllerReplicaSet}, false},
		{"a Pod's Event", objevents.Event{Regarding: pod, Reason: "Scheduled", ReportingController: "default-scheduler"}, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, relevant(tt.ev), tt.name)
	}
}
