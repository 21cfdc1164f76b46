// SPDX-License-Identifier: Apache-2.0

package kubeclient

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
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
// It follows client-go's leader election on a coordination.k8s.io/v1 Lease (the same record, so
// both can share a Lease) without linking client-go's leaderelection package, which compiles the
// whole clientset and its informers. Its rules:
//
//  1. A candidate reads the Lease every retry period (jittered up to 1.2x more). It takes the Lease
//     when none exists, when it has no holder, or when this process has seen the same record
//     unchanged for longer than the record's lease duration (its local clock only: no comparison
//     of clocks between nodes). Taking it increments leaseTransitions; renewing keeps it.
//  2. Every write is an update of the version read (resourceVersion): of two candidates, one wins.
//  3. The holder renews every retry period; when it has not renewed within the renew deadline
//     (shorter than the lease duration), it has lost the Lease: lead's context ends, and lead
//     returns before the next campaign, so lead runs in one term at a time.
//  4. When Run's context ends, lead's context ends and lead returns before the Lease is released
//     (holder cleared, lease duration one second), so a new holder never starts while this one's
//     lead still runs.
type Elector struct {
	leases    rest.Interface // coordination.k8s.io/v1
	lease     Lease
	lead      func(ctx context.Context)
	namespace string
	identity  string

	mu           sync.Mutex
	leader       bool
	observed     coordinationv1.LeaseSpec // the record last read or written
	observedTime time.Time                // when this process saw observed change
	last         *coordinationv1.Lease    // the object last read or written (its resourceVersion)
}

// NewElector returns an Elector that calls lead with a context ending when the Lease is lost.
// leases is a coordination.k8s.io/v1 client (Clients.Coordination, built from LeaseConfig).
func NewElector(leases rest.Interface, l Lease, lead func(ctx context.Context)) (*Elector, error) {
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
	if l.Identity == "" {
		return nil, errors.New("leader election: identity not set and no host name")
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
	if l.LeaseDuration <= l.RenewDeadline || l.RenewDeadline <= l.RetryPeriod || l.RetryPeriod <= 0 {
		return nil, errors.New("leader election: lease duration > renew deadline > retry period > 0 is required")
	}
	return &Elector{leases: leases, lease: l, lead: lead, namespace: l.Namespace, identity: l.Identity}, nil
}

// Run campaigns for the Lease, runs lead while holding it, and campaigns again after losing
// it, until ctx ends; then it ends lead, waits for it to return, and only then releases the
// Lease. It returns once the Lease has been released.
func (e *Elector) Run(ctx context.Context) {
	for e.acquire(ctx) {
		leadCtx, stopLead := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			e.lead(leadCtx)
		}()
		e.renew(leadCtx)
		stopLead()
		<-done
		e.mu.Lock()
		e.leader = false
		e.mu.Unlock()
		if ctx.Err() != nil {
			e.release(ctx)
			return
		}
	}
}

// acquire tries to take the Lease every retry period until it holds it (true) or ctx ends.
func (e *Elector) acquire(ctx context.Context) bool {
	for {
		if e.tryAcquireOrRenew(ctx) {
			e.mu.Lock()
			e.leader = true
			e.mu.Unlock()
			return true
		}
		wait := e.lease.RetryPeriod + time.Duration(rand.Float64()*1.2*float64(e.lease.RetryPeriod)) //nolint:gosec // jitter
		if !sleepCtx(ctx, wait) {
			return false
		}
	}
}

// renew renews the Lease every retry period; it returns when a renewal did not succeed within
// the renew deadline (the Lease is lost) or ctx ended.
func (e *Elector) renew(ctx context.Context) {
	for {
		deadline, cancel := context.WithTimeout(ctx, e.lease.RenewDeadline)
		renewed := false
		for !renewed {
			renewed = e.tryAcquireOrRenew(deadline)
			if !renewed && !sleepCtx(deadline, e.lease.RetryPeriod) {
				break
			}
		}
		cancel()
		if !renewed || !sleepCtx(ctx, e.lease.RetryPeriod) {
			return
		}
	}
}

// tryAcquireOrRenew reads the Lease and writes this process as its holder when rule 1 allows.
func (e *Elector) tryAcquireOrRenew(ctx context.Context) bool {
	now := metav1.NewMicroTime(time.Now())
	seconds := int32(1)
	if s := e.lease.LeaseDuration / time.Second; s > 1 {
		seconds = int32(min(s, math.MaxInt32)) //nolint:gosec // bounded above
	}
	current := &coordinationv1.Lease{}
	err := e.leases.Get().Namespace(e.namespace).Resource("leases").Name(e.lease.Name).Do(ctx).Into(current)
	if apierrors.IsNotFound(err) {
		zero := int32(0)
		created := &coordinationv1.Lease{}
		err = e.leases.Post().Namespace(e.namespace).Resource("leases").Body(&coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: e.lease.Name, Namespace: e.namespace},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity: &e.identity, LeaseDurationSeconds: &seconds,
				AcquireTime: &now, RenewTime: &now, LeaseTransitions: &zero,
			},
		}).Do(ctx).Into(created)
		if err != nil {
			return false
		}
		e.observe(created)
		return true
	}
	if err != nil {
		return false
	}
	e.observe(current)
	holder := deref(current.Spec.HolderIdentity)
	if holder != "" && holder != e.identity {
		e.mu.Lock()
		duration := time.Duration(deref(current.Spec.LeaseDurationSeconds)) * time.Second
		if duration <= 0 {
			duration = e.lease.LeaseDuration
		}
		valid := e.observedTime.Add(duration).After(time.Now())
		e.mu.Unlock()
		if valid {
			return false
		}
	}
	next := current.DeepCopy()
	transitions := deref(current.Spec.LeaseTransitions)
	acquired := current.Spec.AcquireTime
	if holder != e.identity {
		transitions++
		acquired = &now
	}
	next.Spec = coordinationv1.LeaseSpec{
		HolderIdentity: &e.identity, LeaseDurationSeconds: &seconds,
		AcquireTime: acquired, RenewTime: &now, LeaseTransitions: &transitions,
	}
	return e.update(ctx, next)
}

// release clears the holder of a Lease this process held last, so a standby takes it over
// after one second instead of a lease duration.
func (e *Elector) release(ctx context.Context) {
	e.mu.Lock()
	last := e.last
	e.mu.Unlock()
	if last == nil || deref(last.Spec.HolderIdentity) != e.identity {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.lease.RenewDeadline)
	defer cancel()
	now := metav1.NewMicroTime(time.Now())
	one := int32(1)
	none := ""
	next := last.DeepCopy()
	next.Spec.HolderIdentity = &none
	next.Spec.LeaseDurationSeconds = &one
	next.Spec.AcquireTime, next.Spec.RenewTime = &now, &now
	e.update(ctx, next)
}

func (e *Elector) update(ctx context.Context, next *coordinationv1.Lease) bool {
	updated := &coordinationv1.Lease{}
	err := e.leases.Put().Namespace(e.namespace).Resource("leases").Name(e.lease.Name).Body(next).Do(ctx).Into(updated)
	if err != nil {
		return false
	}
	e.observe(updated)
	return true
}

// observe keeps the Lease last seen, and the local time its record last changed (rule 1).
func (e *Elector) observe(l *coordinationv1.Lease) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.last == nil || !apiequality.Semantic.DeepEqual(e.observed, l.Spec) {
		e.observed = *l.Spec.DeepCopy()
		e.observedTime = time.Now()
	}
	e.last = l
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// sleepCtx waits d; false when ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// ErrNotHolder reports that this process does not hold the Lease (Term).
var ErrNotHolder = errors.New("leader election: not the holder of the lease")

// Term numbers the current term: the Lease's leaseTransitions while this process holds it.
// Taking the Lease increments it (design.md, Lease rule 3), so a later term has a higher number; a
// writer that stamps what it writes with its term can be fenced by the next leader (a deposed
// holder's late write is recognizable as older). It reads the Lease; ErrNotHolder when another
// identity holds it.
func (e *Elector) Term(ctx context.Context) (int64, error) {
	lease := &coordinationv1.Lease{}
	err := e.leases.Get().Namespace(e.namespace).Resource("leases").Name(e.lease.Name).Do(ctx).Into(lease)
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
func (e *Elector) IsLeader() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.leader
}

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
