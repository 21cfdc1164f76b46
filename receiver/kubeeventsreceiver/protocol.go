// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/watch"
)

// backoff is an exponential backoff with full jitter that honors a server's Retry-After.
type backoff struct {
	initial, max, cur time.Duration
}

func (b *backoff) next(err error) time.Duration {
	if b.cur == 0 {
		b.cur = b.initial
	} else {
		b.cur = min(2*b.cur, b.max)
	}
	d := b.cur/2 + time.Duration(rand.Int64N(int64(b.cur/2)+1)) //nolint:gosec // jitter, not security
	if secs, ok := apierrors.SuggestsClientDelay(err); ok && time.Duration(secs)*time.Second > d {
		d = time.Duration(secs) * time.Second
	}
	return d
}

func (b *backoff) reset() { b.cur = 0 }

func sleepCtx(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// watchLoop lists, then watches from the list's resource version, re-opening the watch after a
// normal end and relisting only after 410 Gone (design.md rule 5.1).
func (t *term) watchLoop(ctx context.Context, ns string) {
	b := &backoff{initial: t.cfg.Client.Backoff.InitialInterval, max: t.cfg.Client.Backoff.MaxInterval}
	rv := ""
	for ctx.Err() == nil {
		var err error
		if rv == "" {
			rv, err = t.relist(ctx, ns)
		} else {
			var delivered bool
			delivered, err = t.watchOnce(ctx, ns, &rv)
			if delivered {
				b.reset()
			}
			if err == nil {
				t.tel.ReceiverKubeEventsWatchRestarts.Add(ctx, 1)
				continue
			}
		}
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, errGone) || apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			t.tel.ReceiverKubeEventsGone.Add(ctx, 1)
			t.logger.Info("resource version expired; relisting", zap.String("namespace", ns))
			rv = ""
			continue
		}
		if err != nil {
			d := b.next(err)
			t.logger.Warn("listing or watching Events failed; backing off",
				zap.String("namespace", ns), zap.Duration("backoff", d), zap.Error(err))
			t.tel.ReceiverKubeEventsBackoffTime.Add(ctx, d.Seconds())
			if !sleepCtx(ctx, d) {
				return
			}
		}
	}
}

func (t *term) listOptions() metav1.ListOptions {
	return metav1.ListOptions{FieldSelector: t.cfg.FieldSelector}
}

// relist lists every Event page by page and returns the list's resource version (rule 5.3);
// a page whose continue token expired is replaced by one full list (rule 5.6).
func (t *term) relist(ctx context.Context, ns string) (string, error) {
	t.tel.ReceiverKubeEventsRelists.Add(ctx, 1)
	t.mu.Lock()
	cpRV := ""
	if t.cp != nil {
		cpRV = t.cp.ResourceVersions[ns]
	}
	t.mu.Unlock()
	opts := t.listOptions()
	opts.Limit = t.cfg.Client.PageSize
	var pending []transition
	// The open series before the list: those the list does not return were deleted meanwhile.
	t.mu.Lock()
	missing := t.openIn(ns)
	t.mu.Unlock()
	listRV := ""
	// observed holds the resource version of every item the pages so far passed to observe: a
	// full list after an expired continue token skips them unchanged (rule 5.6).
	var observed map[string]string
	fallback := false
	for {
		items, meta, err := t.list(ctx, ns, opts)
		if err != nil && opts.Continue != "" && apierrors.IsResourceExpired(err) {
			// The continue token outlived etcd's compaction: starting over would expire again
			// on a big list, so finish with one unpaged list at the current resource version.
			t.tel.ReceiverKubeEventsGone.Add(ctx, 1)
			t.tel.ReceiverKubeEventsRelistFallbacks.Add(ctx, 1)
			t.logger.Info("continue token expired; finishing the relist with one full list",
				zap.String("namespace", ns))
			opts.Continue, opts.Limit, fallback = "", 0, true
			t.mu.Lock()
			missing = t.openIn(ns)
			t.mu.Unlock()
			items, meta, err = t.list(ctx, ns, opts)
		}
		if err != nil {
			return "", err
		}
		listRV = meta.ResourceVersion
		now := t.now()
		t.publish(items, true)
		t.mu.Lock()
		for i := range items {
			ev := items[i]
			delete(missing, ev.UID)
			t.tel.ReceiverKubeEventsEventsReceived.Add(ctx, 1)
			if !t.keep(&ev) {
				continue
			}
			if cpRV == "" || !rvAbove(ev.ResourceVersion, cpRV) {
				t.table.seed(ev, now) // idempotent: a full list after the pages may repeat it
				continue
			}
			created := true
			if fallback {
				if rv, ok := observed[ev.UID]; ok {
					if rv == ev.ResourceVersion {
						continue // handled by a page already
					}
					created = false // changed since its page: as a watch MODIFIED
				}
			} else {
				if observed == nil {
					observed = map[string]string{}
				}
				observed[ev.UID] = ev.ResourceVersion
			}
			pending = append(pending, t.table.observe(ev, now, created, false)...)
		}
		// Stream: what a page emitted leaves memory with the page (rule 5.9); the checkpoint
		// moves only after the last page.
		for len(pending) >= maxBatch {
			if !t.emitRecords(ctx, pending[:maxBatch]) {
				t.mu.Unlock()
				return "", ctx.Err()
			}
			pending = append([]transition(nil), pending[maxBatch:]...)
		}
		t.mu.Unlock()
		if meta.Continue == "" || fallback {
			break
		}
		opts.Continue = meta.Continue
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for uid := range missing {
		pending = append(pending, t.table.deleted(uid)...)
	}
	for len(pending) > maxBatch {
		if !t.emitRecords(ctx, pending[:maxBatch]) {
			return "", ctx.Err()
		}
		pending = pending[maxBatch:]
	}
	if !t.emitAndSave(ctx, pending, ns, listRV) {
		return "", ctx.Err()
	}
	return listRV, nil
}

// openIn is the set of open series in namespace ns (every namespace for ""); t.mu is held.
func (t *term) openIn(ns string) map[string]bool {
	out := map[string]bool{}
	for uid, o := range t.table.open {
		if ns == "" || o.ev.Namespace == ns {
			out[uid] = true
		}
	}
	return out
}

// rvAbove reports whether resource version a is newer than b; an unparsable one counts as new.
func rvAbove(a, b string) bool {
	c, err := resourceversion.CompareResourceVersion(a, b)
	return err != nil || c > 0
}

// list reads one page in the API the term watches.
func (t *term) list(ctx context.Context, ns string, opts metav1.ListOptions) ([]event, metav1.ListMeta, error) {
	if t.eventsV1 {
		l, err := t.client.EventsV1().Events(ns).List(ctx, opts)
		if err != nil {
			return nil, metav1.ListMeta{}, err
		}
		out := make([]event, len(l.Items))
		for i := range l.Items {
			out[i] = fromEventsV1(&l.Items[i])
		}
		return out, l.ListMeta, nil
	}
	l, err := t.client.CoreV1().Events(ns).List(ctx, opts)
	if err != nil {
		return nil, metav1.ListMeta{}, err
	}
	out := make([]event, len(l.Items))
	for i := range l.Items {
		out[i] = fromEventsV1(eventsV1FromCore(&l.Items[i]))
	}
	return out, l.ListMeta, nil
}

func (t *term) openWatch(ctx context.Context, ns, rv string) (watch.Interface, error) {
	opts := t.listOptions()
	opts.ResourceVersion = rv
	opts.AllowWatchBookmarks = true
	if t.eventsV1 {
		return t.client.EventsV1().Events(ns).Watch(ctx, opts)
	}
	return t.client.CoreV1().Events(ns).Watch(ctx, opts)
}

// toEvent normalizes a watched object; ok is false for other types.
func toEvent(obj runtime.Object) (event, string, bool) {
	switch o := obj.(type) {
	case *eventsv1.Event:
		return fromEventsV1(o), o.ResourceVersion, true
	case *corev1.Event:
		return fromEventsV1(eventsV1FromCore(o)), o.ResourceVersion, true
	}
	return event{}, "", false
}

// watchOnce watches from *rv until the watch ends, handling notifications in batches. It
// returns nil when the server ended the watch, errGone after 410.
func (t *term) watchOnce(ctx context.Context, ns string, rv *string) (delivered bool, err error) {
	w, err := t.openWatch(ctx, ns, *rv)
	if err != nil {
		return false, err
	}
	defer w.Stop()
	ch := w.ResultChan()
	for {
		var batch []watch.Event
		select {
		case <-ctx.Done():
			return delivered, ctx.Err()
		case e, ok := <-ch:
			if !ok {
				return delivered, nil
			}
			batch = append(batch, e)
		}
		// The watch hands over one notification at a time: gather what arrives within
		// batchLinger, so a burst costs a few consumer calls and checkpoint writes, not one each.
		linger := time.NewTimer(batchLinger)
	drain:
		for len(batch) < maxBatch {
			select {
			case e, ok := <-ch:
				if !ok {
					break drain
				}
				batch = append(batch, e)
			case <-linger.C:
				break drain
			case <-ctx.Done():
				break drain
			}
		}
		linger.Stop()
		newRV, err := t.handleBatch(ctx, ns, batch)
		if newRV != "" {
			*rv = newRV
			delivered = true
		}
		if err != nil {
			return delivered, err
		}
	}
}

// handleBatch turns a batch of notifications into records, emits them and saves the checkpoint.
// It returns the resource version reached.
func (t *term) handleBatch(ctx context.Context, ns string, batch []watch.Event) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	var ts []transition
	rv := ""
	var batchErr error
	var seen []event // for the hub (publish.go)
	defer func() { t.publish(seen, false) }()
	for _, e := range batch {
		if e.Type == watch.Error {
			status := apierrors.FromObject(e.Object)
			if apierrors.IsResourceExpired(status) || apierrors.IsGone(status) {
				batchErr = errGone
			} else {
				batchErr = fmt.Errorf("watch: %w", status)
			}
			break
		}
		if e.Type == watch.Bookmark {
			if m, err := metaAccessor(e.Object); err == nil {
				rv = m
			}
			continue
		}
		ev, objRV, ok := toEvent(e.Object)
		if !ok {
			continue
		}
		rv = objRV
		t.tel.ReceiverKubeEventsEventsReceived.Add(ctx, 1)
		if e.Type != watch.Deleted && t.hub != nil {
			seen = append(seen, ev)
		}
		if !t.keep(&ev) {
			continue
		}
		switch e.Type {
		case watch.Added:
			ts = append(ts, t.table.observe(ev, now, true, true)...)
		case watch.Modified:
			ts = append(ts, t.table.observe(ev, now, false, true)...)
		case watch.Deleted:
			ts = append(ts, t.table.deleted(ev.UID)...)
		}
	}
	if rv == "" {
		return "", batchErr
	}
	if !t.emitAndSave(ctx, ts, ns, rv) {
		return "", ctx.Err()
	}
	return rv, batchErr
}

func metaAccessor(obj runtime.Object) (string, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return "", errors.New("bookmark without metadata")
	}
	return m.GetResourceVersion(), nil
}
