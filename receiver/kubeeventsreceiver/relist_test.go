// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/otelcol-k8s/otelcol-k8s/receiver/kubeeventsreceiver/internal/metadata"
)

// listed is an Event as a list returns it: reason names it, count > 1 makes it a series.
func listed(reason, rv string, count int32, now time.Time) eventsv1.Event {
	ev := eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name: reason, Namespace: "default", UID: types.UID("uid-" + reason), ResourceVersion: rv,
		},
		EventTime: metav1.NewMicroTime(now), ReportingController: "test/relist", ReportingInstance: "relist-1",
		Action: "Act", Reason: reason, Type: "Normal", Note: reason,
		Regarding: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "default", Name: "p-" + reason},
	}
	if count > 1 {
		ev.Series = &eventsv1.EventSeries{Count: count, LastObservedTime: metav1.NewMicroTime(now)}
	}
	return ev
}

// TestRelistExpiredContinue drives the fallback of rule 5.6 with scripted API answers: the
// first page, then 410 Expired for its continue token, then the full list. What the page
// already emitted is not emitted again; what changed or went away since is.
func TestRelistExpiredContinue(t *testing.T) {
	now := time.Now()
	// The checkpoint is at resource version 100: Old and Before were handled by the previous
	// run, Before is open in the table when the list starts.
	page := []eventsv1.Event{
		listed("Single", "101", 1, now), listed("Series", "102", 2, now), listed("Old", "50", 2, now),
		listed("Before", "90", 2, now),
	}
	tests := []struct {
		name string
		full []eventsv1.Event
		want map[string]int
	}{
		{
			name: "unchanged since the page",
			full: []eventsv1.Event{page[0], page[1], page[2], page[3], listed("Later", "103", 1, now)},
			want: map[string]int{"Single singleton": 1, "Series start": 1, "Later singleton": 1},
		},
		{
			name: "changed since the page",
			full: []eventsv1.Event{listed("Single", "104", 1, now), listed("Series", "105", 3, now), page[2], page[3]},
			want: map[string]int{"Single singleton": 1, "Series start": 1, "Series ongoing": 1},
		},
		{
			name: "deleted since the page",
			full: []eventsv1.Event{listed("Later", "103", 1, now)},
			want: map[string]int{
				"Single singleton": 1, "Series start": 1, "Series finished": 1, "Old finished": 1,
				"Before finished": 1, "Later singleton": 1,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset()
			calls := 0
			client.PrependReactor("list", "events", func(k8stesting.Action) (bool, runtime.Object, error) {
				calls++
				switch calls {
				case 1:
					return true, &eventsv1.EventList{ListMeta: metav1.ListMeta{ResourceVersion: "102", Continue: "page-2"}, Items: page}, nil
				case 2:
					return true, nil, apierrors.NewResourceExpired("the provided continue parameter is too old")
				}
				return true, &eventsv1.EventList{ListMeta: metav1.ListMeta{ResourceVersion: "110"}, Items: tt.full}, nil
			})
			cfg := createDefaultConfig().(*Config)
			cfg.ClusterName = "test"
			cfg.Client.PageSize = 3
			sink := &consumertest.LogsSink{}
			r, err := newReceiver(receivertest.NewNopSettings(metadata.Type), cfg)
			require.NoError(t, err)
			r.nextLogs = sink
			term := newTerm(r, client, true, nil, 0, "")
			term.cp = &checkpoint{ResourceVersions: map[string]string{"": "100"}}
			term.table.seed(fromEventsV1(&page[3]), now) // Before, open before the list

			rv, err := term.relist(context.Background(), "")
			require.NoError(t, err)
			assert.Equal(t, "110", rv, "the full list's resource version")
			assert.Equal(t, "110", term.cp.ResourceVersions[""])
			assert.Equal(t, 3, calls, "one page, the expired one, one full list")
			assert.Equal(t, tt.want, seen{sink}.counts())
		})
	}
}

// TestRelistStreams is rule 5.9: a relist over pages of changed Events hands their records on
// page by page (every 1,000), not after the last page, and moves the checkpoint only at the end.
func TestRelistStreams(t *testing.T) {
	now := time.Now()
	const pages, perPage = 4, 1000
	client := fake.NewClientset()
	sink := &consumertest.LogsSink{}
	calls := 0
	var seenBefore []int
	client.PrependReactor("list", "events", func(k8stesting.Action) (bool, runtime.Object, error) {
		seenBefore = append(seenBefore, sink.LogRecordCount())
		items := make([]eventsv1.Event, perPage)
		for i := range items {
			items[i] = listed(fmt.Sprintf("E%d-%d", calls, i), strconv.Itoa(200+calls*perPage+i), 1, now)
		}
		calls++
		cont := "next"
		if calls == pages {
			cont = ""
		}
		return true, &eventsv1.EventList{ListMeta: metav1.ListMeta{ResourceVersion: "9000", Continue: cont}, Items: items}, nil
	})
	cfg := createDefaultConfig().(*Config)
	r, err := newReceiver(receivertest.NewNopSettings(metadata.Type), cfg)
	require.NoError(t, err)
	r.nextLogs = sink
	term := newTerm(r, client, true, nil, 0, "")
	term.cp = &checkpoint{ResourceVersions: map[string]string{"": "100"}}
	rv, err := term.relist(context.Background(), "")
	require.NoError(t, err)
	assert.Equal(t, "9000", rv)
	assert.Equal(t, []int{0, 1000, 2000, 3000}, seenBefore, "records handed on before the next page")
	assert.Equal(t, pages*perPage, sink.LogRecordCount())
	assert.Equal(t, "9000", term.cp.ResourceVersions[""])
}
