// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/receiver"
	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/tracesource"
	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/kubeeventsreceiver/internal/metadata"
)

const scopeName = "github.com/otelcol-k8s/otelcol-k8s/receiver/kubeeventsreceiver"

// serviceAccountNamespace is where a pod finds its own namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

type kubeEventsReceiver struct {
	cfg        *Config
	nextLogs   consumer.Logs   // nil without a logs pipeline
	nextTraces consumer.Traces // nil without a traces pipeline
	set        receiver.Settings
	logger     *zap.Logger
	tel        *metadata.TelemetryBuilder

	cancelTerms    context.CancelFunc // stops the watch loops
	cancelElection context.CancelFunc // stops campaigning (and releases the Lease)
	terms          sync.WaitGroup
	election       sync.WaitGroup
	storageClient  storage.Client

	// traceContext answers the regarding object's span context; nil without trace_context.
	traceContext tracesource.Source
	// spanQ carries spans to the traces consumer; nil without a traces pipeline.
	spanQ *spanQueue

	// A logs and a traces pipeline share one receiver (factory.go): it starts and stops once.
	startOnce, shutdownOnce sync.Once
	startErr, shutdownErr   error
	release                 func() // forgets the shared receiver
}

func newReceiver(set receiver.Settings, cfg *Config) (*kubeEventsReceiver, error) {
	tel, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return &kubeEventsReceiver{cfg: cfg, set: set, logger: set.Logger, tel: tel}, nil
}

// restConfig builds the client configuration: kubeconfig or in-cluster, with the client-side
// rate limit and a transport that counts 429 responses (client-go itself waits Retry-After and
// retries them).
func (r *kubeEventsReceiver) restConfig() (*rest.Config, error) {
	rc, err := kubeclient.RestConfig(kubeclient.Options{
		Kubeconfig: r.cfg.Kubeconfig, QPS: r.cfg.Client.QPS, Burst: r.cfg.Client.Burst, UserAgent: "otelcol-k8s/kube_events",
	})
	if err != nil {
		return nil, fmt.Errorf("kube_events: %w", err)
	}
	// Events, Leases and ConfigMaps are built-in types: protobuf, not JSON, on the wire. Decoding
	// the watch stream is most of the receiver's CPU (testbed/BENCHMARKS.md).
	rc.ContentType = runtime.ContentTypeProtobuf
	rc.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			if err == nil && resp.StatusCode == http.StatusTooManyRequests {
				r.tel.ReceiverKubeEventsThrottled.Add(req.Context(), 1)
			}
			return resp, err
		})
	})
	return rc, nil
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// Start starts the receiver once, whichever of its pipelines starts first.
func (r *kubeEventsReceiver) Start(ctx context.Context, host component.Host) error {
	r.startOnce.Do(func() { r.startErr = r.start(ctx, host) })
	return r.startErr
}

func (r *kubeEventsReceiver) start(ctx context.Context, host component.Host) error {
	if r.cfg.TraceContext != nil {
		src, err := tracesource.Find(host, *r.cfg.TraceContext, "kube_events: trace_context")
		if err != nil {
			return err
		}
		r.traceContext = src
	}
	rc, err := r.restConfig()
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("kube_events: %w", err)
	}
	var store checkpointStore
	if r.cfg.Storage != nil {
		ext, ok := host.GetExtensions()[*r.cfg.Storage]
		if !ok {
			return fmt.Errorf("kube_events: storage extension %s not found", r.cfg.Storage)
		}
		se, ok := ext.(storage.Extension)
		if !ok {
			return fmt.Errorf("kube_events: extension %s is not a storage extension", r.cfg.Storage)
		}
		r.storageClient, err = se.GetClient(ctx, component.KindReceiver, r.set.ID, "")
		if err != nil {
			return fmt.Errorf("kube_events: storage client: %w", err)
		}
		store = storageCheckpoints{client: r.storageClient}
	}
	if r.nextTraces != nil {
		r.spanQ = newSpanQueue(r.nextTraces, r.cfg.Spans.QueueSize, r.cfg.ConsumerRetry, r.tel, r.logger)
	}
	termCtx, cancelTerms := context.WithCancel(context.Background())
	r.cancelTerms = cancelTerms
	if !r.cfg.LeaderElection.Enabled {
		r.terms.Add(1)
		go func() {
			defer r.terms.Done()
			r.runTerm(termCtx, client, store, 0, "")
		}()
		return nil
	}
	le := r.cfg.LeaderElection
	namespace := le.LeaseNamespace
	if namespace == "" {
		namespace = ownNamespace()
	}
	identity := le.Identity
	if identity == "" {
		identity, _ = os.Hostname()
	}
	cms := &configMapCheckpoints{
		client: client, namespace: namespace, name: le.LeaseName + "-checkpoint",
		conflictBackoff: r.cfg.Client.Backoff,
		conflicts:       func() { r.tel.ReceiverKubeEventsCheckpointConflicts.Add(context.Background(), 1) },
	}
	// One leader-election implementation for the repository (internal/kubeclient): only the
	// holder watches; losing the Lease ends the term; at shutdown the term ends before the
	// Lease is released (design.md rule 6).
	leaseClients, err := kubeclient.NewClients(kubeclient.LeaseConfig(rc))
	if err != nil {
		return fmt.Errorf("kube_events: %w", err)
	}
	var elector *kubeclient.Elector
	lease := le.Lease(namespace)
	lease.Identity = identity
	elector, err = kubeclient.NewElector(leaseClients.Coordination, lease, func(leaderCtx context.Context) {
		ctx, cancel := context.WithCancel(leaderCtx)
		defer cancel()
		stop := context.AfterFunc(termCtx, cancel)
		defer stop()
		// the term's number fences the checkpoint (design.md rule 5.7)
		number, err := elector.Term(ctx)
		b := &backoff{initial: r.cfg.Client.Backoff.InitialInterval, max: r.cfg.Client.Backoff.MaxInterval}
		for err != nil {
			if errors.Is(err, kubeclient.ErrNotHolder) || !sleepCtx(ctx, b.next(err)) {
				r.logger.Info("not leading after all", zap.String("identity", identity), zap.Error(err))
				return
			}
			number, err = elector.Term(ctx)
		}
		r.logger.Info("leading: watching Events", zap.String("identity", identity), zap.Int64("term", number))
		defer r.logger.Info("not leading", zap.String("identity", identity))
		// a fresh reader per term: the checkpoint it last wrote belongs to an older term
		store := *cms
		store.current = nil
		r.runTerm(ctx, client, &store, number, identity)
	})
	if err != nil {
		return fmt.Errorf("kube_events: %w", err)
	}
	electionCtx, cancelElection := context.WithCancel(context.Background())
	r.cancelElection = cancelElection
	r.election.Add(1)
	go func() {
		defer r.election.Done()
		elector.Run(electionCtx)
	}()
	return nil
}

// runTerm discovers the API to watch and runs a term until ctx ends.
func (r *kubeEventsReceiver) runTerm(ctx context.Context, client kubernetes.Interface, store checkpointStore, number int64, holder string) {
	r.tel.ReceiverKubeEventsLeader.Record(ctx, 1)
	defer r.tel.ReceiverKubeEventsLeader.Record(context.Background(), 0)
	eventsV1, err := r.discover(ctx, client)
	if err != nil {
		return
	}
	newTerm(r, client, eventsV1, store, number, holder).run(ctx)
}

// discover picks the API (rule 1): events.k8s.io/v1 unless configured otherwise or not served.
func (r *kubeEventsReceiver) discover(ctx context.Context, client kubernetes.Interface) (bool, error) {
	switch r.cfg.API {
	case APIEventsV1:
		return true, nil
	case APICoreV1:
		return false, nil
	}
	b := &backoff{initial: r.cfg.Client.Backoff.InitialInterval, max: r.cfg.Client.Backoff.MaxInterval}
	for {
		resources, err := client.Discovery().ServerResourcesForGroupVersion("events.k8s.io/v1")
		if err == nil {
			for _, res := range resources.APIResources {
				if res.Name == "events" {
					return true, nil
				}
			}
			return false, nil
		}
		if isNotServed(err) {
			r.logger.Info("events.k8s.io/v1 is not served; watching core/v1 Events")
			return false, nil
		}
		if !sleepCtx(ctx, b.next(err)) {
			return false, ctx.Err()
		}
	}
}

func isNotServed(err error) bool { return apierrors.IsNotFound(err) }

func ownNamespace() string {
	b, err := os.ReadFile(serviceAccountNamespace)
	if err != nil || len(strings.TrimSpace(string(b))) == 0 {
		return "default"
	}
	return strings.TrimSpace(string(b))
}

// Shutdown stops the receiver once, whichever of its pipelines stops first.
func (r *kubeEventsReceiver) Shutdown(ctx context.Context) error {
	r.shutdownOnce.Do(func() {
		r.shutdownErr = r.shutdown(ctx)
		if r.release != nil {
			r.release()
		}
	})
	return r.shutdownErr
}

func (r *kubeEventsReceiver) shutdown(ctx context.Context) error {
	if r.cancelTerms != nil {
		r.cancelTerms()
		r.terms.Wait()
	}
	if r.cancelElection != nil {
		// The Elector ends the term before it releases the Lease (design.md rule 6).
		r.cancelElection()
		r.election.Wait()
	}
	if r.spanQ != nil {
		r.spanQ.shutdown(ctx)
	}
	var err error
	if r.storageClient != nil {
		err = r.storageClient.Close(ctx)
	}
	r.tel.Shutdown()
	return err
}
