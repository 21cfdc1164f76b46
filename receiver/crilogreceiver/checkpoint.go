// SPDX-License-Identifier: Apache-2.0

package crilogreceiver

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver/internal/tracker"
)

// saveCheckpoints writes dirty states, deletions and the index in one storage batch.
func (r *criReceiver) saveCheckpoints(ctx context.Context) error {
	if !r.unsaved && !r.indexDirty && len(r.deletes) == 0 {
		return nil // nothing changed since the last save (an idle node's every poll)
	}
	if r.client == nil {
		for _, fs := range r.files {
			fs.dirty = false
			fs.savedOffset = fs.readOffset
		}
		r.deletes = r.deletes[:0]
		r.unsaved, r.indexDirty = false, false
		return nil
	}
	var ops []*storage.Operation
	var saved []*fileState
	for _, fs := range r.files {
		if fs.dirty {
			ops = append(ops, storage.SetOperation(fs.key, fs.committed))
			saved = append(saved, fs)
		}
	}
	for _, k := range r.deletes {
		ops = append(ops, storage.DeleteOperation(k))
	}
	if r.indexDirty {
		keys := make([]string, 0, len(r.files))
		for _, fs := range r.files {
			keys = append(keys, fs.key)
		}
		// Checkpoints whose resume failed stay (index entry and value) for the next start.
		// So do those of files parked to free their slot.
		for _, s := range slices.Concat(r.tracker.Retained(), r.orphans, r.tracker.Parked()) {
			if k := keyOf(s); !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
		ops = append(ops, storage.SetOperation(indexKey, []byte(strings.Join(keys, "\n"))))
	}
	if len(ops) == 0 {
		return nil
	}
	r.lastSave = time.Now()
	// Saving must finish even while shutting down: use a context that is not canceled.
	if err := r.client.Batch(context.WithoutCancel(ctx), ops...); err != nil {
		r.tb.ReceiverCriLogCheckpointErrors.Add(ctx, 1)
		return err
	}
	for _, fs := range saved {
		fs.dirty = false
		if st, err := tracker.UnmarshalState(fs.committed); err == nil {
			fs.savedOffset = st.Offset
		}
	}
	r.deletes = r.deletes[:0]
	r.indexDirty, r.unsaved = false, false
	return nil
}

// readerKey is the storage key of a reader's checkpoint: the key it was resumed from, or a new
// one unique to this reader. A key is never derived from (device, inode) alone: a new file that
// takes a freed inode must not overwrite a checkpoint kept for the file that had it (one whose
// resume failed, or one waiting for its rotated file to be found).
func readerKey(rd *tracker.Reader, now time.Time) string {
	if rd.Key != "" {
		return rd.Key
	}
	return filePrefixKey + rd.ID.String() + "." + strconv.FormatInt(now.UnixNano(), 36)
}

// keyOf is the storage key a checkpoint was loaded from.
func keyOf(s tracker.State) string {
	if s.Key != "" {
		return s.Key
	}
	return filePrefixKey + s.ID.String()
}

// loadCheckpoints reads the index and every state it names. firstStart is true when there is
// no index at all.
func loadCheckpoints(ctx context.Context, client storage.Client) (states []tracker.State, firstStart bool, err error) {
	idx, err := client.Get(ctx, indexKey)
	if err != nil {
		return nil, false, fmt.Errorf("reading checkpoint index: %w", err)
	}
	if idx == nil {
		return nil, true, nil
	}
	var ops []*storage.Operation
	for _, k := range strings.Split(string(idx), "\n") {
		if strings.HasPrefix(k, filePrefixKey) {
			ops = append(ops, storage.GetOperation(k))
		}
	}
	if len(ops) > 0 {
		if err := client.Batch(ctx, ops...); err != nil {
			return nil, false, fmt.Errorf("reading checkpoints: %w", err)
		}
	}
	for _, op := range ops {
		if op.Value == nil {
			continue
		}
		s, err := tracker.UnmarshalState(op.Value)
		if err != nil {
			continue // unreadable: the file is read anew rather than skipped
		}
		s.Key = op.Key
		states = append(states, s)
	}
	return states, false, nil
}
