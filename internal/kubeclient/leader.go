// SPDX-License-Identifier: Apache-2.0

package kubeclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// client-go's default leader-election durations.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// serviceAccountNamespace is where Kubernetes mounts the Pod's namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Lease names the Lease and how it is held.
type Lease struct {
	// Name of the Lease; required.
	Name string
	// Namespace of the Lease; empty means the Pod's own (service account) namespace.
	Namespace string
	// Identity of this holder; empty means the host name (the Pod's name).
	Identity string
	// Durations; zero means client-go's defaults (DefaultLeaseDuration, ...).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// Elector runs work only while this process holds a Lease.
//
// Its guarantees: lead runs in one term at a time; when the Lease is lost (client-go gives up
// once it cannot renew within the renew deadline, shorter than the lease duration) lead's
// context ends; when Run's context ends, lead's context ends and lead returns before the Lease
// is released, so a new holder never starts while this one's lead still runs.
type Elector struct {
	elector   *leaderelection.LeaderElector
	lead      func(ctx context.Context)
	namespace string
	lock      resourcelock.Interface
	identity  string
	// leases and name read the Lease for Term, apart from lock: client-go's LeaseLock keeps the
	// last Lease it read in itself, so a second reader through it races with the renewals.
	leases coordinationv1client.LeaseInterface
	name   string

	mu       sync.Mutex
	running  chan struct{} // closed when the current term's lead returned
	stopping bool          // Run's context ended: no new term starts
	stopLead context.CancelFunc
}

// NewElector returns an Elector that calls lead with a context ending when the Lease is lost.
func NewElector(client kubernetes.Interface, l Lease, lead func(ctx context.Context)) (*Elector, error) {
	if l.Name == "" {
		return nil, errors.New("leader election: lease name is required")
	}
	if l.Namespace == "" {
		b, err := os.ReadFile(serviceAccountNamespace)
		if err != nil {
			return nil, fmt.Errorf("leader election: lease namespace not set and not running in a Pod: %w", err)
		}
		l.Namespace = strings.TrimSpace(string(b))
	}
	if l.Identity == "" {
		l.Identity, _ = os.Hostname()
	}
	if l.LeaseDuration == 0 {
		l.LeaseDuration = DefaultLeaseDuration
	}
	if l.RenewDeadline == 0 {
		l.RenewDeadline = DefaultRenewDeadline
	}
	if l.RetryPeriod == 0 {
		l.RetryPeriod = DefaultRetryPeriod
	}
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, l.Namespace, l.Name,
		client.CoreV1(), client.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: l.Identity})
	if err != nil {
		return nil, fmt.Errorf("leader election: lease lock: %w", err)
	}
	e := &Elector{
		lead: lead, namespace: l.Namespace, lock: lock, identity: l.Identity,
		leases: client.CoordinationV1().Leases(l.Namespace), name: l.Name,
	}
	e.elector, err = leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   l.LeaseDuration,
		RenewDeadline:   l.RenewDeadline,
		RetryPeriod:     l.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            l.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: e.startedLeading,
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("leader election: %w", err)
	}
	return e, nil
}

func (e *Elector) startedLeading(ctx context.Context) {
	done := make(chan struct{})
	defer close(done)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	e.mu.Lock()
	if e.stopping {
		e.mu.Unlock()
		return
	}
	e.running, e.stopLead = done, cancel
	e.mu.Unlock()
	e.lead(ctx)
}

// stopTerm ends the current term's lead, if any, waits for it to return and keeps new terms
// from starting.
func (e *Elector) stopTerm() {
	e.mu.Lock()
	e.stopping = true
	done, stop := e.running, e.stopLead
	e.mu.Unlock()
	if stop != nil {
		stop()
	}
	if done != nil {
		<-done
	}
}

// waitTerm waits for the last term's lead to return (client-go runs it in its own goroutine).
func (e *Elector) waitTerm() {
	e.mu.Lock()
	done := e.running
	e.running = nil
	e.mu.Unlock()
	if done != nil {
		<-done
	}
}

// Run campaigns for the Lease, runs lead while holding it, and campaigns again after losing
// it, until ctx ends; then it ends lead, waits for it to return, and only then releases the
// Lease. It returns once the Lease has been released.
func (e *Elector) Run(ctx context.Context) {
	campaign, release := context.WithCancel(context.WithoutCancel(ctx))
	defer release()
	stop := context.AfterFunc(ctx, func() {
		e.stopTerm()
		release()
	})
	defer stop()
	for campaign.Err() == nil {
		e.elector.Run(campaign)
		// client-go runs lead in its own goroutine: wait for it before campaigning again.
		e.waitTerm()
	}
}

// ErrNotHolder reports that this process does not hold the Lease (Term).
var ErrNotHolder = errors.New("leader election: not the holder of the lease")

// Term numbers the current term: the Lease's leaseTransitions while this process holds it.
// client-go increments it at every change of holder, so a later term has a higher number; a
// writer that stamps what it writes with its term can be fenced by the next leader (a deposed
// holder's late write is recognizable as older). It reads the Lease; ErrNotHolder when another
// identity holds it.
func (e *Elector) Term(ctx context.Context) (int64, error) {
	lease, err := e.leases.Get(ctx, e.name, metav1.GetOptions{})
	if err != nil {
		return 0, fmt.Errorf("leader election: reading the lease: %w", err)
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != e.identity {
		return 0, ErrNotHolder
	}
	if lease.Spec.LeaseTransitions == nil {
		return 0, nil
	}
	return int64(*lease.Spec.LeaseTransitions), nil
}

// Identity is this holder's identity in the Lease.
func (e *Elector) Identity() string { return e.identity }

// Namespace is the Lease's namespace (the Pod's own when the Lease did not name one).
func (e *Elector) Namespace() string { return e.namespace }

// IsLeader reports whether this process holds the Lease.
func (e *Elector) IsLeader() bool { return e.elector.IsLeader() }

// LeaseConfig returns a copy of rc for the Lease's client: its 429 and 5xx answers lose their
// Retry-After header, so client-go does not retry them (its retry sleeps through Retry-After
// without watching the request's context). A renewal then fails within the renew deadline
// instead of overrunning it by up to Retry-After, and the holder learns it lost the Lease
// before a standby can take it over (lease duration > renew deadline).
func LeaseConfig(rc *rest.Config) *rest.Config {
	c := rest.CopyConfig(rc)
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper { return noRetryAfter{rt} })
	return c
}

type noRetryAfter struct{ rt http.RoundTripper }

func (n noRetryAfter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := n.rt.RoundTrip(req)
	if err == nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= http.StatusInternalServerError) {
		resp.Header.Del("Retry-After")
	}
	return resp, err
}
