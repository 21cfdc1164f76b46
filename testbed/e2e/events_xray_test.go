// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient/kubecluster"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/harness"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
	"github.com/otelcol-k8s/otelcol-k8s/testbed/localxray"
)

// switchedTraces is the events collector's traces endpoint: the local X-Ray server (SigV4
// verified), or, while down is set, 503 Service Unavailable to every request (X-Ray unavailable
// or throttling, as the exporter sees either: a retryable error).
type switchedTraces struct {
	xray    *localxray.Server
	down    atomic.Bool
	refused atomic.Int64
}

// spanUIDs counts the stored spans by the Event uid they carry.
func (s *switchedTraces) spanUIDs() map[string]int {
	out := map[string]int{}
	for _, b := range s.xray.Batches() {
		rss := b.Traces.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			for j := 0; j < rss.At(i).ScopeSpans().Len(); j++ {
				spans := rss.At(i).ScopeSpans().At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					if uid, ok := spans.At(k).Attributes().Get("otelcol_k8s.event.uid"); ok {
						out[uid.AsString()]++
					}
				}
			}
		}
	}
	return out
}

func (s *switchedTraces) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.down.Load() {
		s.refused.Add(1)
		http.Error(w, "service unavailable", http.StatusServiceUnavailable)
		return
	}
	s.xray.ServeHTTP(w, r)
}

// onTime is how late an Event's log record may reach CloudWatch Logs during the X-Ray outage:
// the records never wait for the traces pipeline (design.md rule 9.7), so this is the
// pipeline's own latency (the watch batch, the exporter's flush) with room for a loaded machine.
const onTime = 30 * time.Second

// eventsThroughXRayOutage runs the events collector (shipped traces configuration: kube_events'
// spans through otlp_http to the X-Ray endpoint, without a sending queue) with its X-Ray
// endpoint down for the given time while a controller keeps writing Events. Every Event's log
// record reaches CloudWatch Logs within onTime of its creation throughout the outage; after
// recovery every Event's span arrives or is counted in kube_events' spans_dropped. It runs
// inside TestServerOutage ("xray"); alone: E2E_ARGS='-run TestServerOutage/xray -e2e.outage=1m'.
func eventsThroughXRayOutage(t *testing.T, down time.Duration) {
	bin := binary(t)
	cluster := kubecluster.Start(t)
	client := harness.KubeClient(t, cluster.Kubeconfig, 0, 0)
	ctx := context.Background()
	srv := localcloudwatch.New(localcloudwatch.Config{})
	endpoint, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Close() }()
	traces := &switchedTraces{xray: localxray.New(localxray.Config{Credentials: map[string]string{"local": "local"}})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	traceSrv := &http.Server{Handler: traces, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = traceSrv.Serve(ln) }()
	defer func() { _ = traceSrv.Close() }()
	metricsAddr := freeAddr(t)
	n := 0 // Events written
	col := startEventsCollectorMetrics(t, bin, t.TempDir(), "events-x", cluster.Kubeconfig, endpoint, ln.Addr().String(), metricsAddr, eventsSeries, false)
	defer col.Kill()

	// collectorState is what the events collector says of itself (its kube_events and exporter
	// counters), logged with a missed deadline so a failure shows which stage held the data.
	collectorState := func() string {
		got, err := fetchMetrics("http://" + metricsAddr + "/metrics")
		if err != nil {
			return fmt.Sprintf("metrics not read: %v", err)
		}
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(got)) {
			histogram := strings.HasSuffix(k, "_bucket") || strings.HasSuffix(k, "_count") || strings.HasSuffix(k, "_sum")
			if !histogram && (strings.HasPrefix(k, "otelcol_receiver_kube_events_") || strings.HasPrefix(k, "otelcol_exporter_sen")) {
				parts = append(parts, fmt.Sprintf("%s=%g", k, got[k]))
			}
		}
		return strings.Join(parts, " ")
	}
	waitFor := func(what string, timeout time.Duration, cond func() bool) time.Duration {
		t.Helper()
		began := time.Now()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for !cond() {
			if time.Since(began) > timeout {
				t.Fatalf("%s: not within %s (%d Events written; the collector's counters: %s)", what, timeout, n, collectorState())
			}
			<-tick.C
		}
		return time.Since(began)
	}
	waitFor("the collector leads and has listed", 90*time.Second, func() bool {
		_, err := client.CoreV1().ConfigMaps("default").Get(ctx, "otelcol-k8s-events-checkpoint", metav1.GetOptions{})
		return err == nil
	})
	// create writes the next Event. A write the API server could not take right then (a
	// timeout, a throttle: the machine runs the other scenarios too) is tried again for up to
	// 30 s, as a controller's recorder would; each is logged.
	create := func(reason string) string {
		t.Helper()
		n++
		ev := &eventsv1.Event{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "xray-", Namespace: "default"},
			EventTime:  metav1.NowMicro(), ReportingController: "e2e/xray", ReportingInstance: "xray-1",
			Action: "Act", Reason: reason, Type: "Normal", Note: fmt.Sprintf("%s %d", reason, n),
			Regarding: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "default", Name: fmt.Sprintf("p-%d", n), UID: types.UID(fmt.Sprintf("00000000-0000-4000-9000-%012d", n))},
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			e, err := client.EventsV1().Events("default").Create(ctx, ev, metav1.CreateOptions{})
			if err == nil {
				return string(e.UID)
			}
			if !transientAPIError(err) || time.Now().After(deadline) {
				t.Fatalf("writing Event %d: %v", n, err)
			}
			t.Logf("writing Event %d: %v; trying again", n, err)
			time.Sleep(time.Second)
		}
	}
	stored := func(uid string) bool {
		byUID, _, _ := eventRecords(t, srv)
		return byUID[uid+" singleton"] == 1
	}
	uids := []string{create("Before")}
	waitFor("the first record", 60*time.Second, func() bool { return stored(uids[0]) })

	traces.down.Store(true)
	began := time.Now()
	var worst time.Duration
	for time.Since(began) < down {
		uid := create("DuringXRayOutage")
		uids = append(uids, uid)
		worst = max(worst, waitFor("an Event's log record during the X-Ray outage", onTime, func() bool { return stored(uid) }))
		// one Event every down/60 (10 s for the 10-minute outage)
		waitFor("the next write", down/60+5*time.Second, func() bool { return time.Since(began) >= time.Duration(len(uids)-1)*down/60 })
	}
	refused := traces.refused.Load()
	traces.down.Store(false)
	if refused == 0 {
		t.Fatal("the X-Ray endpoint was never called during the outage")
	}
	uids = append(uids, create("After"))

	// After recovery every record is stored once and every span arrives. The traces exporter's
	// retries end after its max_elapsed_time (counted in otelcol_exporter_send_failed_spans),
	// but the error is not permanent and kube_events sends those spans again (consumer_retry):
	// only what its own span queue could not hold is lost, counted in spans_dropped.
	counters := func() (spansDropped, exporterGaveUp float64) {
		for k, v := range scrape(t, "http://"+metricsAddr+"/metrics") {
			switch {
			case strings.HasPrefix(k, "otelcol_receiver_kube_events_spans_dropped"):
				spansDropped += v
			case strings.HasPrefix(k, "otelcol_exporter_send_failed_spans"):
				exporterGaveUp += v
			}
		}
		return spansDropped, exporterGaveUp
	}
	arrived := func() int {
		got := traces.spanUIDs()
		c := 0
		for _, uid := range uids {
			if got[uid] > 0 {
				c++
			}
		}
		return c
	}
	waitFor("every record and every span after recovery (or counted in spans_dropped)", 2*time.Minute, func() bool {
		byUID, _, _ := eventRecords(t, srv)
		for _, uid := range uids {
			if byUID[uid+" singleton"] == 0 {
				return false
			}
		}
		spansDropped, _ := counters()
		return float64(arrived())+spansDropped >= float64(len(uids))
	})
	byUID, _, _ := eventRecords(t, srv)
	for _, uid := range uids {
		if byUID[uid+" singleton"] != 1 {
			t.Errorf("Event %s: %d records, want 1", uid, byUID[uid+" singleton"])
		}
	}
	if st := traces.xray.Stats(); len(st.Errors) > 0 {
		t.Errorf("the X-Ray endpoint refused requests: %v", st.Errors)
	}
	spansDropped, exporterGaveUp := counters()
	t.Logf("X-Ray down %s: %d Events, each record stored within %s (worst); %d export attempts refused, the exporter gave up on %.0f spans; after recovery %d spans arrived, %.0f dropped by kube_events",
		down, len(uids), worst.Round(time.Millisecond), refused, exporterGaveUp, arrived(), spansDropped)
}

// transientAPIError reports whether a write the API server refused may be tried again as it is:
// it timed out, was throttled or met a server error (a loaded machine), not a refusal of the
// object itself.
func transientAPIError(err error) bool {
	return apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsUnexpectedServerError(err) ||
		errors.Is(err, context.DeadlineExceeded) || isConnError(err)
}

// isConnError reports a connection the API server dropped or refused.
func isConnError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}
