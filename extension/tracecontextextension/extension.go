// SPDX-License-Identifier: Apache-2.0

package tracecontextextension

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	k8smeta "k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"

	"github.com/otelcol-k8s/otelcol-k8s/extension/tracecontextextension/internal/metadata"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/namefilter"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objevents"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objref"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/podmeta"
	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient"
	"github.com/otelcol-k8s/otelcol-k8s/pkg/objecttrace"
)

// fetchQueueSize bounds the owners waiting to be fetched in node scope.
const fetchQueueSize = 1024

type ownerRef struct {
	uid, namespace, name string
	res                  Resource
}

// traceContextExtension is the trace_context extension.
type traceContextExtension struct {
	// Hub joins kube_events, which publishes the Events it watches, and kube_lifecycle's
	// rollouts, which act on them (internal/k8smodel/objevents; design.md rule 12).
	objevents.Hub

	cfg   *Config
	tel   *metadata.TelemetryBuilder
	store *store
	// kinds maps "group/Kind" to its configured resource.
	kinds map[string]Resource

	// newClient makes the metadata client; tests replace it.
	newClient func() (k8smeta.Interface, error)
	client    k8smeta.Interface

	fetches chan ownerRef
	mu      sync.Mutex
	queued  map[string]bool // owner uids queued for a fetch
	// negative holds the owner uids whose last fetch failed or found an object the store does
	// not keep (no context and no owner of a configured kind: a DaemonSet, a StatefulSet, a bare
	// Job), and when: neither is asked again within owner_ttl (design.md rule 7).
	negative *negativeSet

	lookupMu sync.Mutex // lookup mode: one object's fetches at a time, so none is read twice

	unsubscribe func() // from pod_metadata
	cancel      context.CancelFunc
	wg          sync.WaitGroup
}

func newExtension(cfg *Config, set component.TelemetrySettings) (*traceContextExtension, error) {
	tel, err := metadata.NewTelemetryBuilder(set)
	if err != nil {
		return nil, err
	}
	e := &traceContextExtension{
		cfg:      cfg,
		tel:      tel,
		kinds:    map[string]Resource{},
		fetches:  make(chan ownerRef, fetchQueueSize),
		queued:   map[string]bool{},
		negative: newNegativeSet(cfg.MaxObjects),
	}
	var kinds []groupKind
	for _, r := range cfg.Resources {
		e.kinds[r.Group+"/"+r.Kind] = r
		kinds = append(kinds, groupKind{r.Group, r.Kind})
	}
	e.store = newStore(cfg.MaxObjects, kinds,
		func(kind string, delta int64) {
			tel.ExtensionTraceContextObjects.Add(context.Background(), delta, metric.WithAttributes(attribute.String("kind", kind)))
		},
		func() { tel.ExtensionTraceContextObjectsDropped.Add(context.Background(), 1) })
	e.newClient = func() (k8smeta.Interface, error) { return newMetadataClient(cfg.Kubeconfig) }
	return e, nil
}

// newMetadataClient returns a metadata-only client: in-cluster when kubeconfig is empty.
func newMetadataClient(kubeconfig string) (k8smeta.Interface, error) {
	rc, err := kubeclient.RestConfig(kubeclient.Options{Kubeconfig: kubeconfig, UserAgent: "otelcol-k8s/trace_context"})
	if err != nil {
		return nil, fmt.Errorf("trace_context: %w", err)
	}
	clients, err := kubeclient.NewClients(rc)
	if err != nil {
		return nil, fmt.Errorf("trace_context: %w", err)
	}
	return clients.Metadata, nil
}

// Start opens the watches (design.md rule 7) and waits for their first lists (rule 8).
func (e *traceContextExtension) Start(ctx context.Context, host component.Host) error {
	client, err := e.newClient()
	if err != nil {
		return err
	}
	e.client = client
	runCtx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel

	if e.cfg.Mode == ModeLookup { // no watch; fetched objects are forgotten as in node scope
		e.wg.Add(1)
		go e.fetchOwners(runCtx)
		return nil
	}
	var synced []<-chan struct{}
	if e.cfg.PodMetadata != nil {
		if err := e.followPodSource(host); err != nil {
			cancel()
			return err
		}
	}
	for _, r := range e.cfg.Resources {
		selector := ""
		if e.cfg.PodMetadata != nil {
			break // node scope: the Pods come from pod_metadata, nothing else is watched
		}
		if e.cfg.NodeName != "" {
			if r.Group != "" || r.Kind != "Pod" {
				continue
			}
			selector = fields.OneTermEqualSelector("spec.nodeName", e.cfg.NodeName).String()
		}
		synced = append(synced, e.watch(runCtx, r, selector))
	}
	if e.cfg.NodeName != "" {
		e.wg.Add(1)
		go e.fetchOwners(runCtx)
	}

	timeout := time.NewTimer(e.cfg.SyncTimeout)
	defer timeout.Stop()
	for _, s := range synced {
		select {
		case <-s:
		case <-timeout.C:
			return errors.New("trace_context: the watches' first lists did not complete within sync_timeout")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Dependencies names pod_metadata, when configured, so that the collector starts it first
// (the collector's extensioncapabilities.Dependent).
func (e *traceContextExtension) Dependencies() []component.ID {
	if e.cfg.PodMetadata == nil {
		return nil
	}
	return []component.ID{*e.cfg.PodMetadata}
}

// followPodSource takes the node's Pods from the pod_metadata extension (design.md rule 7): the
// Pods it holds now, then its changes, each stored as the extension's own watch would.
func (e *traceContextExtension) followPodSource(host component.Host) error {
	id := *e.cfg.PodMetadata
	ext, ok := host.GetExtensions()[id]
	if !ok {
		return fmt.Errorf("trace_context: pod_metadata: extension %q is not configured; add it to the service's extensions", id)
	}
	src, ok := ext.(podmeta.Feed)
	if !ok {
		return fmt.Errorf("trace_context: pod_metadata: extension %q (%T) does not serve podmeta.Feed", id, ext)
	}
	res := e.kinds["/Pod"]
	apply := func(ev podmeta.Event) {
		if ev.Type == podmeta.Deleted {
			e.store.remove(ev.Pod.UID)
			return
		}
		e.observeRead(ev.Pod) // before the Pod, so that the Pod does not queue its owner's GET
		e.observe(res, podObject(ev.Pod), time.Time{})
	}
	held, unsubscribe := src.SubscribeAll(apply)
	e.unsubscribe = unsubscribe
	for _, p := range held {
		apply(podmeta.Event{Type: podmeta.Upserted, Pod: p})
	}
	return nil
}

// observeRead stores the owner pod_metadata read for the Pod (its nearest, when podmeta.Owner.Read
// is set) as if this extension had fetched it then: one GET per owner for both extensions
// (design.md rule 7). A read older than what is held (this extension's own re-read) is ignored;
// an owner not kept is remembered as negative, as a fetch of it would be.
func (e *traceContextExtension) observeRead(p *podmeta.Pod) {
	if len(p.Owners) == 0 || p.Owners[0].Read.IsZero() {
		return
	}
	o := &p.Owners[0]
	group, _, valid := objref.SplitAPIVersion(o.APIVersion)
	res, ok := e.kinds[group+"/"+o.Kind]
	if !ok || !valid {
		return
	}
	if at, held := e.store.fetchedAt(o.UID); held && !at.Before(o.Read) {
		return
	}
	e.mu.Lock()
	at, negative := e.negative.get(o.UID)
	e.mu.Unlock()
	if negative && !at.Before(o.Read) {
		return
	}
	e.observe(res, objectMeta(o.Name, p.Namespace, o.UID, o.Annotations, o.Created, p.Owners[1:]), o.Read)
	if _, kept := e.store.fetchedAt(o.UID); !kept {
		e.mu.Lock()
		e.negative.put(o.UID, o.Read)
		e.mu.Unlock()
	}
}

// podObject is the metadata observe reads of a source's Pod: its annotations and its
// controller owner (the source's nearest owner).
func podObject(p *podmeta.Pod) *metav1.PartialObjectMetadata {
	return objectMeta(p.Name, p.Namespace, p.UID, p.Annotations, p.Created, p.Owners)
}

// objectMeta is the metadata observe reads of an object of a source's Pod's chain: its
// annotations, creation and controller owner (the first of owners, the chain above it).
func objectMeta(name, namespace, uid string, annotations map[string]string, created time.Time, owners []podmeta.Owner) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: namespace, UID: types.UID(uid), Annotations: annotations,
		CreationTimestamp: metav1.NewTime(created),
	}}
	if len(owners) > 0 {
		o, yes := owners[0], true
		m.OwnerReferences = []metav1.OwnerReference{{APIVersion: o.APIVersion, Kind: o.Kind, Name: o.Name, UID: types.UID(o.UID), Controller: &yes}}
	}
	return m
}

// Shutdown stops the watches and the owner fetcher.
func (e *traceContextExtension) Shutdown(context.Context) error {
	if e.unsubscribe != nil {
		e.unsubscribe()
	}
	if e.cancel != nil {
		e.cancel()
	}
	e.wg.Wait()
	e.tel.Shutdown()
	return nil
}

// SpanContextForObject returns the span context of the object, or of its nearest controller
// owner that carries one, and whether it is to be linked to (tracesource.Source; design.md rule
// 10). It answers from memory.
func (e *traceContextExtension) SpanContextForObject(_ context.Context, apiVersion, kind, namespace, name, uid string) (sc trace.SpanContext, link, ok bool) {
	if e.store.table.n.Load() == 0 { // nothing resolves to a context (design.md rule 4)
		return trace.SpanContext{}, false, false
	}
	if r := e.store.find(apiVersion, kind, namespace, name, uid); r != nil {
		return r.spanContext(), r.link, true
	}
	return trace.SpanContext{}, false, false
}

// FetchSpanContextForObject is SpanContextForObject that, in lookup mode (design.md rule 11),
// first reads the object and its owners from the API server when nothing fresh is held about
// its uid: at most one GET per object and owner per owner_ttl, failures and objects without a
// context included. It may block for those GETs (bounded by ctx); in watch mode it never does.
// An object named without a uid is not fetched (its identity could not be checked).
func (e *traceContextExtension) FetchSpanContextForObject(ctx context.Context, apiVersion, kind, namespace, name, uid string) (sc trace.SpanContext, link, ok bool) {
	if e.cfg.Mode == ModeLookup && uid != "" && name != "" {
		group, _, valid := objref.SplitAPIVersion(apiVersion)
		if res, configured := e.kinds[group+"/"+kind]; configured && valid {
			e.lookupMu.Lock()
			if e.stale(uid) {
				e.fetchOwnerAt(ctx, ownerRef{uid: uid, namespace: namespace, name: name, res: res}, 0)
			}
			e.lookupMu.Unlock()
		}
	}
	return e.SpanContextForObject(ctx, apiVersion, kind, namespace, name, uid)
}

// stale reports whether nothing fresh is known of uid: neither held from a fetch within
// owner_ttl nor remembered as negative within it.
func (e *traceContextExtension) stale(uid string) bool {
	if at, held := e.store.fetchedAt(uid); held && !at.IsZero() && time.Since(at) < e.cfg.OwnerTTL {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	at, ok := e.negative.get(uid)
	return !ok || time.Since(at) >= e.cfg.OwnerTTL
}

// TrustsContext reports whether a context an object of kind in namespace carries itself is used
// (tracesource.Trust; design.md rule 9): the one trust decision, also for the annotations
// kube_lifecycle reads itself.
func (e *traceContextExtension) TrustsContext(kind, namespace string) bool {
	return e.cfg.Trust.trusts(kind, namespace)
}

// TraceContextNames returns a filter of the names of every object a look-up may answer for
// (object_ref's optional TraceContextNames): a record whose object's name it does not contain
// is not looked up.
func (e *traceContextExtension) TraceContextNames() *namefilter.Filter { return e.store.table.names }

// TraceContextsHeld reports whether any object held has a non-empty effective context: when not,
// object_ref skips a batch's look-ups (its optional TraceContextsHeld).
func (e *traceContextExtension) TraceContextsHeld() bool { return e.store.table.n.Load() > 0 }

// watch runs a metadata-only reflector of r into the store; the channel closes after its first
// list.
func (e *traceContextExtension) watch(ctx context.Context, r Resource, fieldSelector string) <-chan struct{} {
	gvr := schema.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Resource}
	client := e.client.Resource(gvr)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = fieldSelector
			return client.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = fieldSelector
			return client.Watch(ctx, o)
		},
	}
	rs := &reflectorStore{ext: e, res: r, synced: make(chan struct{})}
	ref := cache.NewReflectorWithOptions(lw, &metav1.PartialObjectMetadata{}, rs,
		cache.ReflectorOptions{Name: "trace_context " + gvr.String()})
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		ref.RunWithContext(ctx)
	}()
	return rs.synced
}

// observe stores what a watched or fetched object says (design.md rules 2 and 6) and, in node
// scope, queues its owner for a fetch (rule 7).
func (e *traceContextExtension) observe(r Resource, m *metav1.PartialObjectMetadata, fetched time.Time) {
	sc, scheme, err := objecttrace.SpanContextFromAnnotations(m.Annotations)
	if err != nil {
		e.tel.ExtensionTraceContextInvalidContexts.Add(context.Background(), 1)
	}
	if sc.IsValid() && !e.cfg.Trust.trusts(r.Kind, m.Namespace) {
		sc = trace.SpanContext{} // threat model: not an object the operator trusts
		e.tel.ExtensionTraceContextUntrustedContexts.Add(context.Background(), 1)
	}
	owner := e.controllerOwner(m)
	rec := record{key: nameKey{group: r.Group, kind: r.Kind, namespace: m.Namespace, name: m.Name}, sc: sc, link: scheme == objecttrace.SchemeTraceparent, fetched: fetched}
	if owner == nil {
		e.store.put(string(m.UID), rec)
		return
	}
	rec.owner = owner.uid
	if e.cfg.NodeName == "" {
		e.store.put(string(m.UID), rec)
		return
	}
	// An owner read before this object was created is read again, and the object resolves to no
	// context until then rather than to the owner's older one (design.md rule 7, re-read).
	created := m.CreationTimestamp.Time
	rec.wait = e.readBefore(owner.uid, created)
	e.store.put(string(m.UID), rec)
	if queued := e.queueFetch(*owner, created); rec.wait && !queued {
		rec.wait = false // the queue is full: the owner's context as held
		e.store.put(string(m.UID), rec)
	}
}

// controllerOwner returns m's controller owner when it is of a configured kind.
func (e *traceContextExtension) controllerOwner(m *metav1.PartialObjectMetadata) *ownerRef {
	for i := range m.OwnerReferences {
		o := &m.OwnerReferences[i]
		if o.Controller == nil || !*o.Controller {
			continue
		}
		group, _, valid := objref.SplitAPIVersion(o.APIVersion)
		if res, ok := e.kinds[group+"/"+o.Kind]; ok && valid {
			return &ownerRef{uid: string(o.UID), namespace: m.Namespace, name: o.Name, res: res}
		}
		return nil
	}
	return nil
}

// readBefore reports whether owner uid was last read (held from a fetch, or remembered as
// negative) before created, to the API's one-second precision: only a dependent created in a
// later second than the read counts (design.md rule 7, re-read). Counting the read's own second
// too would read the owner again for the very dependent whose appearance caused the read (it
// is created, then the owner is read, within a second), and hide that dependent's context
// meanwhile.
func (e *traceContextExtension) readBefore(uid string, created time.Time) bool {
	if created.IsZero() {
		return false
	}
	at, held := e.store.fetchedAt(uid)
	if !held || at.IsZero() {
		e.mu.Lock()
		at, _ = e.negative.get(uid)
		e.mu.Unlock()
	}
	return !at.IsZero() && !created.Before(at.Truncate(time.Second).Add(time.Second))
}

// queueFetch queues owner unless it is held and fresh, queued, or fetched without a result to
// keep (failed, or nothing to store) within owner_ttl, and was read after a dependent created at
// created; it reports whether the owner is queued (now or before).
func (e *traceContextExtension) queueFetch(o ownerRef, created time.Time) bool {
	reread := e.readBefore(o.uid, created)
	if at, held := e.store.fetchedAt(o.uid); held && time.Since(at) < e.cfg.OwnerTTL && !reread {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.queued[o.uid] {
		return true
	}
	if at, ok := e.negative.get(o.uid); ok && time.Since(at) < e.cfg.OwnerTTL && !reread {
		return false
	}
	select {
	case e.fetches <- o:
		e.queued[o.uid] = true
		return true
	default: // full: a later Pod naming the owner queues it again
		return false
	}
}

// fetchOwners GETs queued owners' metadata, one at a time, and every owner_ttl forgets the
// owners no held object names any more (design.md rule 7).
func (e *traceContextExtension) fetchOwners(ctx context.Context) {
	defer e.wg.Done()
	sweep := time.NewTicker(e.cfg.OwnerTTL)
	defer sweep.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-sweep.C:
			e.store.dropUnreferenced()
		case o := <-e.fetches:
			e.fetchOwner(ctx, o)
		}
	}
}

func (e *traceContextExtension) fetchOwner(ctx context.Context, o ownerRef) {
	e.fetchOwnerAt(ctx, o, 0)
}

// fetchOwnerAt fetches o, hops owners above the first one fetched. An owner of o read before o
// was created (a Deployment read before its new ReplicaSet) is read first, so that o never
// resolves to the context it had then (design.md rule 7, re-read).
func (e *traceContextExtension) fetchOwnerAt(ctx context.Context, o ownerRef, hops int) {
	defer e.store.release(o.uid) // its waiting dependents resolve, whatever the outcome
	gvr := schema.GroupVersionResource{Group: o.res.Group, Version: o.res.Version, Resource: o.res.Resource}
	m, err := e.client.Resource(gvr).Namespace(o.namespace).Get(ctx, o.name, metav1.GetOptions{})
	if err == nil && string(m.UID) == o.uid && hops+1 < maxOwnerHops {
		// lookup mode reads the owners it does not know fresh too, before the object (rule 11)
		if up := e.controllerOwner(m); up != nil && (e.readBefore(up.uid, m.CreationTimestamp.Time) || e.cfg.Mode == ModeLookup && e.stale(up.uid)) {
			e.fetchOwnerAt(ctx, *up, hops+1)
		}
	}
	outcome := "ok"
	switch {
	case apierrors.IsNotFound(err):
		outcome = "not_found"
	case err != nil:
		outcome = "error"
	case string(m.UID) != o.uid: // deleted and recreated under the same name
		outcome = "not_found"
	}
	now := time.Now()
	kept := false
	if outcome == "ok" {
		e.observe(o.res, m, now) // held before it leaves the queue: no second fetch
		_, kept = e.store.fetchedAt(o.uid)
		if !kept {
			outcome = "no_context"
		}
	}
	e.tel.ExtensionTraceContextOwnerFetches.Add(ctx, 1, metric.WithAttributes(attribute.String("outcome", outcome)))
	e.mu.Lock()
	delete(e.queued, o.uid)
	if !kept {
		e.negative.put(o.uid, now)
	} else {
		e.negative.remove(o.uid)
	}
	e.mu.Unlock()
}

// reflectorStore feeds one resource's reflector into the extension's store.
type reflectorStore struct {
	ext      *traceContextExtension
	res      Resource
	synced   chan struct{}
	syncOnce sync.Once
}

func (s *reflectorStore) Add(obj any) error {
	if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
		s.ext.observe(s.res, m, time.Time{})
	}
	return nil
}

func (s *reflectorStore) Update(obj any) error { return s.Add(obj) }

func (s *reflectorStore) Delete(obj any) error {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
		s.ext.store.remove(string(m.UID))
	}
	return nil
}

// Replace is a (re)list: the listed objects are observed, held ones of this kind not listed are
// forgotten.
func (s *reflectorStore) Replace(list []any, _ string) error {
	stale := s.ext.store.uidsOf(s.res.Group, s.res.Kind)
	for _, obj := range list {
		if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
			delete(stale, string(m.UID))
			s.ext.observe(s.res, m, time.Time{})
		}
	}
	for uid := range stale {
		s.ext.store.remove(uid)
	}
	s.syncOnce.Do(func() { close(s.synced) })
	return nil
}

func (*reflectorStore) Resync() error { return nil }
