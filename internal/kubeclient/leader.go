// SPDX-License-Identifier: Apache-2.0

package kubeclient

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
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
type Elector struct {
	elector *leaderelection.LeaderElector
	lead    func(ctx context.Context)

	mu      sync.Mutex
	running chan struct{} // closed when the current term's lead returned
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
	e := &Elector{lead: lead}
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
	e.mu.Lock()
	e.running = done
	e.mu.Unlock()
	defer close(done)
	e.lead(ctx)
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
// it, until ctx ends; it returns after the last term's lead has returned and the Lease has been
// released.
func (e *Elector) Run(ctx context.Context) {
	for ctx.Err() == nil {
		e.elector.Run(ctx)
		e.waitTerm()
	}
}

// IsLeader reports whether this process holds the Lease.
func (e *Elector) IsLeader() bool { return e.elector.IsLeader() }
