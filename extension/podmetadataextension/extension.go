// SPDX-License-Identifier: Apache-2.0

package podmetadataextension

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	k8smeta "k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/otelcol-k8s/otelcol-k8s/extension/podmetadataextension/internal/metadata"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objref"
	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/podmeta"
	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient"
)

// failedLookupLife is how long a failed owner or namespace lookup is remembered: Pods naming it
// meanwhile are published without it instead of each waiting for another timeout.
const failedLookupLife = 30 * time.Second

var (
	podsGVR       = builtinGVR("Pod")
	namespacesGVR = builtinGVR("Namespace")
	// parentKinds are the owners looked up for their own controller (design.md rule 3), by
	// "group/Kind".
	parentKinds = map[string]schema.GroupVersionResource{
		"apps/" + podmeta.KindReplicaSet: builtinGVR(podmeta.KindReplicaSet),
		"batch/" + podmeta.KindJob:       builtinGVR(podmeta.KindJob),
	}
)

// builtinGVR is the group, version and resource of a built-in kind, from the object model's
// one kind table.
func builtinGVR(kind string) schema.GroupVersionResource {
	k := objref.Builtin().Lookup("", kind)
	return schema.GroupVersionResource{Group: k.Group, Version: k.Version, Resource: k.Resource}
}

// parentInfo is a cached owner's own controller (nil: it has none) and, when the read found
// it, when that was, its creation and its trace-context annotations (podmeta.Owner.Read).
type parentInfo struct {
	parent      *podmeta.Owner
	failed      bool
	read        time.Time
	created     time.Time
	annotations map[string]string
}

// namespaceInfo is a cached namespace.
type namespaceInfo struct {
	uid    string
	labels map[string]string
	failed bool
}

// podMetadataExtension is the pod_metadata extension.
type podMetadataExtension struct {
	cfg *Config
	tel *metadata.TelemetryBuilder

	// restConfig makes the clients' configuration.
	restConfig func() (*rest.Config, error)
	client     k8smeta.Interface
	// now is the clock of the caches; tests replace it.
	now func() time.Time

	// parents and namespaces are used by the watch goroutine only.
	parents    *ttlCache[parentInfo]
	namespaces *ttlCache[namespaceInfo]

	mu      sync.RWMutex
	byUID   map[string]*podmeta.Pod
	byName  map[string]*podmeta.Pod // namespace + "/" + name
	waiters map[string]map[chan struct{}]struct{}
	subs    map[int]func(podmeta.Event)
	nextSub int

	runCtx context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

var _ podmeta.Source = (*podMetadataExtension)(nil)

func newExtension(cfg *Config, set component.TelemetrySettings) (*podMetadataExtension, error) {
	tel, err := metadata.NewTelemetryBuilder(set)
	if err != nil {
		return nil, err
	}
	e := &podMetadataExtension{
		cfg:        cfg,
		tel:        tel,
		now:        time.Now,
		parents:    newTTLCache[parentInfo](cfg.MaxOwners, cfg.OwnerTTL),
		namespaces: newTTLCache[namespaceInfo](cfg.MaxNamespaces, cfg.NamespaceTTL),
		byUID:      map[string]*podmeta.Pod{},
		byName:     map[string]*podmeta.Pod{},
		waiters:    map[string]map[chan struct{}]struct{}{},
		subs:       map[int]func(podmeta.Event){},
	}
	e.restConfig = func() (*rest.Config, error) {
		rc, err := kubeclient.RestConfig(kubeclient.Options{
			Kubeconfig: cfg.Kubeconfig, UserAgent: "otelcol-k8s/pod_metadata", QPS: cfg.QPS, Burst: cfg.Burst,
		})
		if err != nil {
			return nil, fmt.Errorf("pod_metadata: %w", err)
		}
		return rc, nil
	}
	return e, nil
}

var _ podmeta.StatusSource = (*podMetadataExtension)(nil)

// podListWatch returns the list-watch of the node's Pods and the type it delivers: metadata
// only, or with pod_status whole Pods, which the store trims at once (design.md rule 2).
func (e *podMetadataExtension) podListWatch(clients *kubeclient.Clients) (cache.ListerWatcher, runtime.Object) {
	selector := fields.OneTermEqualSelector("spec.nodeName", e.cfg.NodeName).String()
	if !e.cfg.PodStatus {
		pods := e.client.Resource(podsGVR)
		return selectedListWatch(selector, pods.List, pods.Watch), &metav1.PartialObjectMetadata{}
	}
	return cache.NewFilteredListWatchFromClient(clients.Core, "pods", metav1.NamespaceAll, func(o *metav1.ListOptions) {
		o.FieldSelector = selector
	}), &corev1.Pod{}
}

// selectedListWatch lists and watches with the field selector.
func selectedListWatch[L runtime.Object](selector string,
	list func(context.Context, metav1.ListOptions) (L, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error),
) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = selector
			return list(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = selector
			return watchFn(ctx, o)
		},
	}
}

// Start opens the one Pod watch of the node (design.md rule 1) and waits for its first list.
func (e *podMetadataExtension) Start(ctx context.Context, _ component.Host) error {
	rc, err := e.restConfig()
	if err != nil {
		return err
	}
	clients, err := kubeclient.NewClients(rc)
	if err != nil {
		return fmt.Errorf("pod_metadata: %w", err)
	}
	e.client = clients.Metadata
	lw, objType := e.podListWatch(clients)
	e.runCtx, e.cancel = context.WithCancel(context.Background())
	st := &podStore{ext: e, synced: make(chan struct{})}
	ref := cache.NewReflectorWithOptions(lw, objType, st,
		cache.ReflectorOptions{Name: "pod_metadata pods of node " + e.cfg.NodeName})
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		ref.RunWithContext(e.runCtx)
	}()

	timeout := time.NewTimer(e.cfg.SyncTimeout)
	defer timeout.Stop()
	select {
	case <-st.synced:
		return nil
	case <-timeout.C:
		return errors.New("pod_metadata: the Pod watch's first list did not complete within sync_timeout")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Shutdown stops the watch and releases every waiter.
func (e *podMetadataExtension) Shutdown(context.Context) error {
	if e.cancel != nil {
		e.cancel()
	}
	e.wg.Wait()
	e.tel.Shutdown()
	return nil
}

// PodByUID implements podmeta.Source.
func (e *podMetadataExtension) PodByUID(uid string) (*podmeta.Pod, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	p, ok := e.byUID[uid]
	return p, ok
}

// PodByName implements podmeta.Source.
func (e *podMetadataExtension) PodByName(namespace, name string) (*podmeta.Pod, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	p, ok := e.byName[namespace+"/"+name]
	return p, ok
}

// WaitPod implements podmeta.Source (design.md rule 6).
func (e *podMetadataExtension) WaitPod(ctx context.Context, uid string) (*podmeta.Pod, bool) {
	e.mu.Lock()
	if p, ok := e.byUID[uid]; ok {
		e.mu.Unlock()
		return p, true
	}
	ch := make(chan struct{})
	if e.waiters[uid] == nil {
		e.waiters[uid] = map[chan struct{}]struct{}{}
	}
	e.waiters[uid][ch] = struct{}{}
	e.mu.Unlock()

	var stopped <-chan struct{}
	if e.runCtx != nil {
		stopped = e.runCtx.Done()
	}
	select {
	case <-ch:
		return e.PodByUID(uid)
	case <-ctx.Done():
	case <-stopped:
	}
	e.mu.Lock()
	delete(e.waiters[uid], ch)
	if len(e.waiters[uid]) == 0 {
		delete(e.waiters, uid)
	}
	e.mu.Unlock()
	return e.PodByUID(uid) // published just as the wait ended
}

// Subscribe implements podmeta.Source.
func (e *podMetadataExtension) Subscribe(fn func(podmeta.Event)) func() {
	e.mu.Lock()
	defer e.mu.Unlock()
	id := e.nextSub
	e.nextSub++
	e.subs[id] = fn
	return func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		delete(e.subs, id)
	}
}

// WatchesStatus implements podmeta.StatusSource: true with pod_status.
func (e *podMetadataExtension) WatchesStatus() bool { return e.cfg.PodStatus }

// SubscribeAll implements podmeta.StatusSource. The Pods held are copied and fn subscribed
// under one lock; upsert and remove make a change visible and collect the subscribers to tell
// under that lock too, so a change is either in the copy or delivered to fn (design.md rule 8).
func (e *podMetadataExtension) SubscribeAll(fn func(podmeta.Event)) ([]*podmeta.Pod, func()) {
	e.mu.Lock()
	pods := make([]*podmeta.Pod, 0, len(e.byUID))
	for _, p := range e.byUID {
		pods = append(pods, p)
	}
	id := e.nextSub
	e.nextSub++
	e.subs[id] = fn
	e.mu.Unlock()
	return pods, func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		delete(e.subs, id)
	}
}

// upsert resolves a watched Pod and publishes it (design.md rules 2 to 5).
func (e *podMetadataExtension) upsert(m *metav1.PartialObjectMetadata, status *podmeta.Status) {
	uid := string(m.UID)
	e.mu.RLock()
	old, held := e.byUID[uid]
	full := !held && len(e.byUID) >= e.cfg.MaxPods
	e.mu.RUnlock()
	if old != nil && old.ResourceVersion == m.ResourceVersion {
		return // a relist repeats what is held
	}
	if full {
		e.tel.ExtensionPodMetadataPodsDropped.Add(context.Background(), 1)
		return
	}
	p := e.resolve(m)
	p.Status = status
	if p.Incomplete {
		e.tel.ExtensionPodMetadataIncomplete.Add(context.Background(), 1)
	}
	e.mu.Lock()
	if old != nil && (old.Namespace != p.Namespace || old.Name != p.Name) {
		delete(e.byName, old.Namespace+"/"+old.Name)
	}
	e.byUID[uid] = p
	e.byName[p.Namespace+"/"+p.Name] = p
	for ch := range e.waiters[uid] {
		close(ch)
	}
	delete(e.waiters, uid)
	subs := e.subscribersLocked()
	e.mu.Unlock()
	notify(subs, podmeta.Event{Type: podmeta.Upserted, Pod: p})
	if old == nil {
		e.tel.ExtensionPodMetadataPods.Add(context.Background(), 1)
	}
}

// remove forgets a Pod and tells subscribers.
func (e *podMetadataExtension) remove(uid string) {
	e.mu.Lock()
	p, ok := e.byUID[uid]
	if ok {
		delete(e.byUID, uid)
		if e.byName[p.Namespace+"/"+p.Name] == p {
			delete(e.byName, p.Namespace+"/"+p.Name)
		}
	}
	subs := e.subscribersLocked()
	e.mu.Unlock()
	if ok {
		notify(subs, podmeta.Event{Type: podmeta.Deleted, Pod: p})
		e.tel.ExtensionPodMetadataPods.Add(context.Background(), -1)
	}
}

// subscribersLocked returns the current subscribers; e.mu is held.
func (e *podMetadataExtension) subscribersLocked() []func(podmeta.Event) {
	if len(e.subs) == 0 {
		return nil
	}
	out := make([]func(podmeta.Event), 0, len(e.subs))
	for _, fn := range e.subs {
		out = append(out, fn)
	}
	return out
}

// notify calls the subscribers without holding e.mu, so that they may read the source. Only
// the watch goroutine publishes: events reach every subscriber in the watch's order.
func notify(subs []func(podmeta.Event), ev podmeta.Event) {
	for _, fn := range subs {
		fn(ev)
	}
}

// uids returns the uids held.
func (e *podMetadataExtension) uids() map[string]bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	out := make(map[string]bool, len(e.byUID))
	for uid := range e.byUID {
		out[uid] = true
	}
	return out
}

// resolve makes the published record of a Pod: its own metadata, its owner chain and its
// namespace (design.md rules 3 to 5).
func (e *podMetadataExtension) resolve(m *metav1.PartialObjectMetadata) *podmeta.Pod {
	p := &podmeta.Pod{
		UID: string(m.UID), Namespace: m.Namespace, Name: m.Name, NodeName: e.cfg.NodeName,
		ResourceVersion: m.ResourceVersion, Labels: m.Labels, Annotations: m.Annotations,
		Generation: m.Generation, Created: m.CreationTimestamp.Time,
	}
	if m.DeletionTimestamp != nil {
		p.Deleting = m.DeletionTimestamp.Time
		if g := m.DeletionGracePeriodSeconds; g != nil {
			p.DeletionGracePeriod = time.Duration(*g) * time.Second
		}
	}
	if ref := controllerOf(m.OwnerReferences); ref != nil {
		owner := podmeta.Owner{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: string(ref.UID)}
		p.Owners = append(p.Owners, owner)
		if gvr, ok := parentKinds[objref.APIGroup(ref.APIVersion)+"/"+ref.Kind]; ok {
			info := e.parentOf(gvr, m.Namespace, owner)
			p.Owners[0].Read, p.Owners[0].Created, p.Owners[0].Annotations = info.read, info.created, info.annotations
			if info.failed {
				p.Incomplete = true
			} else if info.parent != nil {
				p.Owners = append(p.Owners, *info.parent)
			}
		}
	}
	ns := e.namespace(m.Namespace)
	if ns.failed {
		p.Incomplete = true
	}
	p.NamespaceUID, p.NamespaceLabels = ns.uid, ns.labels
	p.Excluded = podmeta.Truthy(m.Annotations[podmeta.ExcludeAnnotation]) ||
		(e.cfg.ExcludeNamespaceLabel != "" && podmeta.Truthy(ns.labels[e.cfg.ExcludeNamespaceLabel]))
	return p
}

// parentOf returns an owner's own controller, from the cache or a metadata GET.
func (e *podMetadataExtension) parentOf(gvr schema.GroupVersionResource, namespace string, owner podmeta.Owner) parentInfo {
	now := e.now()
	if info, ok := e.parents.get(owner.UID, now); ok {
		return info
	}
	ctx, cancel := context.WithTimeout(e.runCtx, e.cfg.LookupTimeout)
	defer cancel()
	obj, err := e.client.Resource(gvr).Namespace(namespace).Get(ctx, owner.Name, metav1.GetOptions{})
	outcome := e.countLookup(gvr.Resource, err)
	var info parentInfo
	switch {
	case outcome == "not_found":
		// Deleted already (a finished Job's Pod outlives it): nothing above it to name.
	case err != nil:
		info.failed = true
		e.parents.putFor(owner.UID, info, now, failedLookupLife)
		return info
	case string(obj.UID) != owner.UID:
		// Same name, another object: the Pod's owner is gone; its successor is not its parent.
	default:
		if ref := controllerOf(obj.OwnerReferences); ref != nil {
			info.parent = &podmeta.Owner{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: string(ref.UID)}
		}
		info.read, info.created = now, obj.CreationTimestamp.Time
		for k, v := range obj.Annotations {
			if podmeta.TraceAnnotation(k) {
				if info.annotations == nil {
					info.annotations = map[string]string{}
				}
				info.annotations[k] = v
			}
		}
	}
	e.parents.put(owner.UID, info, now)
	return info
}

// namespace returns a namespace's uid and labels, from the cache or a metadata GET.
func (e *podMetadataExtension) namespace(name string) namespaceInfo {
	now := e.now()
	if info, ok := e.namespaces.get(name, now); ok {
		return info
	}
	ctx, cancel := context.WithTimeout(e.runCtx, e.cfg.LookupTimeout)
	defer cancel()
	obj, err := e.client.Resource(namespacesGVR).Get(ctx, name, metav1.GetOptions{})
	outcome := e.countLookup("namespaces", err)
	var info namespaceInfo
	switch {
	case outcome == "not_found":
	case err != nil:
		info.failed = true
		e.namespaces.putFor(name, info, now, failedLookupLife)
		return info
	default:
		info.uid, info.labels = string(obj.UID), obj.Labels
	}
	e.namespaces.put(name, info, now)
	return info
}

// countLookup records one GET and returns its outcome.
func (e *podMetadataExtension) countLookup(resource string, err error) string {
	outcome := "ok"
	switch {
	case apierrors.IsNotFound(err):
		outcome = "not_found"
	case err != nil:
		outcome = "error"
	}
	e.tel.ExtensionPodMetadataLookups.Add(context.Background(), 1, metric.WithAttributes(
		attribute.String("resource", resource), attribute.String("outcome", outcome)))
	return outcome
}

// controllerOf returns the managing controller among refs, or nil.
func controllerOf(refs []metav1.OwnerReference) *metav1.OwnerReference {
	for i := range refs {
		if refs[i].Controller != nil && *refs[i].Controller {
			return &refs[i]
		}
	}
	return nil
}

// podStore feeds the Pod reflector into the extension.
type podStore struct {
	ext      *podMetadataExtension
	synced   chan struct{}
	syncOnce sync.Once
}

func (s *podStore) Add(obj any) error {
	if m, st := trim(obj); m != nil {
		s.ext.upsert(m, st)
	}
	return nil
}

func (s *podStore) Update(obj any) error { return s.Add(obj) }

func (s *podStore) Delete(obj any) error {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if m, _ := trim(obj); m != nil {
		s.ext.remove(string(m.UID))
	}
	return nil
}

// Replace is a (re)list: the listed Pods are upserted, held ones not listed are removed.
func (s *podStore) Replace(list []any, _ string) error {
	stale := s.ext.uids()
	for _, obj := range list {
		if m, st := trim(obj); m != nil {
			delete(stale, string(m.UID))
			s.ext.upsert(m, st)
		}
	}
	for uid := range stale {
		s.ext.remove(uid)
	}
	s.syncOnce.Do(func() { close(s.synced) })
	return nil
}

// The reflector reads nothing back from its store.
func (*podStore) List() []any                                { return nil }
func (*podStore) ListKeys() []string                         { return nil }
func (*podStore) Get(any) (item any, exists bool, err error) { return nil, false, nil }
func (*podStore) GetByKey(string) (item any, exists bool, err error) {
	return nil, false, nil
}
func (*podStore) Resync() error { return nil }

// trim returns what the extension keeps of a watched object: its metadata, and with pod_status
// its status trimmed to podmeta.Status (design.md rule 2). A whole Pod is not kept: the
// reflector's copy is garbage once trimmed.
func trim(obj any) (*metav1.PartialObjectMetadata, *podmeta.Status) {
	switch o := obj.(type) {
	case *metav1.PartialObjectMetadata:
		return o, nil
	case *corev1.Pod:
		return &metav1.PartialObjectMetadata{TypeMeta: o.TypeMeta, ObjectMeta: o.ObjectMeta}, trimStatus(&o.Status)
	}
	return nil, nil
}

// trimStatus keeps the phase, the conditions and the containers' states.
func trimStatus(s *corev1.PodStatus) *podmeta.Status {
	st := &podmeta.Status{Phase: string(s.Phase), ObservedGeneration: s.ObservedGeneration}
	if s.StartTime != nil {
		st.StartTime = s.StartTime.Time
	}
	if len(s.Conditions) > 0 {
		st.Conditions = make([]podmeta.Condition, len(s.Conditions))
		for i, c := range s.Conditions {
			st.Conditions[i] = podmeta.Condition{Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, LastTransitionTime: c.LastTransitionTime.Time}
		}
	}
	st.InitContainers = trimContainers(s.InitContainerStatuses)
	st.Containers = trimContainers(s.ContainerStatuses)
	return st
}

func trimContainers(in []corev1.ContainerStatus) []podmeta.ContainerStatus {
	if len(in) == 0 {
		return nil
	}
	out := make([]podmeta.ContainerStatus, len(in))
	for i := range in {
		c := &in[i]
		out[i] = podmeta.ContainerStatus{
			Name: c.Name, Ready: c.Ready, RestartCount: c.RestartCount,
			State: trimState(&c.State), LastTermination: trimState(&c.LastTerminationState),
		}
	}
	return out
}

func trimState(s *corev1.ContainerState) podmeta.ContainerState {
	var out podmeta.ContainerState
	if w := s.Waiting; w != nil {
		out.Waiting = &podmeta.Waiting{Reason: w.Reason}
	}
	if r := s.Running; r != nil {
		out.Running = &podmeta.Running{StartedAt: r.StartedAt.Time}
	}
	if t := s.Terminated; t != nil {
		out.Terminated = &podmeta.Terminated{ExitCode: t.ExitCode, Reason: t.Reason, StartedAt: t.StartedAt.Time, FinishedAt: t.FinishedAt.Time}
	}
	return out
}
