// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"go.opentelemetry.io/collector/extension/xextension/storage"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// checkpointKey is the storage key (and ConfigMap binaryData key) of the checkpoint.
const checkpointKey = "checkpoint"

// checkpointMagic starts an encoded checkpoint (format version 1).
var checkpointMagic = []byte("kev1")

// errFenced reports a checkpoint written by a newer term: this term was deposed and must not
// write again (design.md rule 5.7).
var errFenced = errors.New("checkpoint: a newer leader's term wrote it; this term is deposed")

// errBadCheckpoint reports a checkpoint that cannot be decoded: the term starts as without one.
var errBadCheckpoint = errors.New("checkpoint: not decodable")

// checkpoint is what was emitted (design.md rule 5.2): the resource version up to which every
// notification of each watch (key: namespace, "" for all) became accepted records, and the
// state of every open series and of every series finished without a write, by seriesKey.
type checkpoint struct {
	// Term is the writer's term: the Lease's leaseTransitions when it acquired the Lease (0
	// without leader election). Holder is its identity.
	Term             int64
	Holder           string
	ResourceVersions map[string]string
	Series           map[uint64]priorSeries
}

// checkpointHeader is the JSON head of the encoding.
type checkpointHeader struct {
	Term             int64             `json:"term"`
	Holder           string            `json:"holder,omitempty"`
	ResourceVersions map[string]string `json:"resource_versions"`
	Base             int64             `json:"base"`
}

// Entry flags.
const flagTomb = 1

// encode writes the checkpoint compactly (rule 5.8): a JSON head, then per series its 8-byte
// key, flags, count, term, and times as signed deltas from a base (last occurrence in
// microseconds, last write or finish in seconds). About 20 bytes per series.
func (cp *checkpoint) encode() []byte {
	keys := make([]uint64, 0, len(cp.Series))
	base := int64(math.MaxInt64)
	for k, p := range cp.Series {
		keys = append(keys, k)
		if !p.At.IsZero() {
			base = min(base, p.At.Unix())
		}
	}
	if base == math.MaxInt64 {
		base = 0
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	head, _ := json.Marshal(checkpointHeader{Term: cp.Term, Holder: cp.Holder, ResourceVersions: cp.ResourceVersions, Base: base})
	buf := make([]byte, 0, len(checkpointMagic)+len(head)+24*len(keys)+16)
	buf = append(buf, checkpointMagic...)
	buf = binary.AppendUvarint(buf, uint64(len(head)))
	buf = append(buf, head...)
	buf = binary.AppendUvarint(buf, uint64(len(keys)))
	for _, k := range keys {
		p := cp.Series[k]
		buf = binary.BigEndian.AppendUint64(buf, k)
		var flags byte
		if p.Tomb {
			flags |= flagTomb
		}
		buf = append(buf, flags)
		buf = binary.AppendUvarint(buf, uint64(max(p.Count, 0)))
		buf = binary.AppendVarint(buf, p.Term-cp.Term)
		buf = binary.AppendVarint(buf, unixSeconds(p.At)-base)
		if !p.Tomb {
			buf = binary.AppendVarint(buf, unixMicros(p.Last)-base*1e6)
		}
	}
	return buf
}

func unixSeconds(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

func unixMicros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

func timeOf(sec int64) time.Time {
	if sec == 0 {
		return time.Time{}
	}
	return time.Unix(sec, 0).UTC()
}

func decodeCheckpoint(b []byte) (*checkpoint, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if !bytes.HasPrefix(b, checkpointMagic) {
		return nil, fmt.Errorf("%w: unknown format", errBadCheckpoint)
	}
	r := bytes.NewReader(b[len(checkpointMagic):])
	n, err := binary.ReadUvarint(r)
	if err != nil || n > uint64(r.Len()) { //nolint:gosec // a reader's length is never negative
		return nil, fmt.Errorf("%w: truncated head", errBadCheckpoint)
	}
	head := make([]byte, n)
	_, _ = r.Read(head)
	var h checkpointHeader
	if err := json.Unmarshal(head, &h); err != nil {
		return nil, fmt.Errorf("%w: %w", errBadCheckpoint, err)
	}
	count, err := binary.ReadUvarint(r)
	if err != nil || count > uint64(r.Len())/10 { //nolint:gosec // a reader's length is never negative
		return nil, fmt.Errorf("%w: bad series count", errBadCheckpoint)
	}
	cp := &checkpoint{Term: h.Term, Holder: h.Holder, ResourceVersions: h.ResourceVersions, Series: make(map[uint64]priorSeries, count)}
	if cp.ResourceVersions == nil {
		cp.ResourceVersions = map[string]string{}
	}
	var kb [8]byte
	for i := uint64(0); i < count; i++ {
		if _, err := r.Read(kb[:]); err != nil {
			return nil, fmt.Errorf("%w: truncated series", errBadCheckpoint)
		}
		flags, err1 := r.ReadByte()
		c, err2 := binary.ReadUvarint(r)
		term, err3 := binary.ReadVarint(r)
		at, err4 := binary.ReadVarint(r)
		if err := errors.Join(err1, err2, err3, err4); err != nil || c > math.MaxInt32 {
			return nil, fmt.Errorf("%w: truncated series", errBadCheckpoint)
		}
		p := priorSeries{Count: int32(c), Term: h.Term + term, Tomb: flags&flagTomb != 0}
		if at != -h.Base {
			p.At = timeOf(h.Base + at)
		}
		if !p.Tomb {
			last, err := binary.ReadVarint(r)
			if err != nil {
				return nil, fmt.Errorf("%w: truncated series", errBadCheckpoint)
			}
			if last != -h.Base*1e6 {
				p.Last = time.UnixMicro(h.Base*1e6 + last).UTC()
			}
		}
		cp.Series[binary.BigEndian.Uint64(kb[:])] = p
	}
	return cp, nil
}

// merge combines this term's checkpoint with the one another term wrote meanwhile (found after
// a conflict, rule 5.7): ours must be of the same or a newer term (else errFenced); the resource
// versions are ours; per series the entry of the newer term wins, between equals a finish wins
// over an open series and then the higher count.
func (cp *checkpoint) merge(theirs *checkpoint) (*checkpoint, error) {
	if theirs == nil {
		return cp, nil
	}
	if theirs.Term > cp.Term {
		return nil, errFenced
	}
	out := &checkpoint{
		Term: cp.Term, Holder: cp.Holder, ResourceVersions: cp.ResourceVersions,
		Series: make(map[uint64]priorSeries, len(cp.Series)+len(theirs.Series)),
	}
	for k, p := range theirs.Series {
		out.Series[k] = p
	}
	for k, p := range cp.Series {
		q, ok := out.Series[k]
		if !ok || newerSeries(p, q) {
			out.Series[k] = p
		}
	}
	return out, nil
}

// newerSeries reports whether entry p supersedes q (rule 5.7).
func newerSeries(p, q priorSeries) bool {
	switch {
	case p.Term != q.Term:
		return p.Term > q.Term
	case p.Tomb != q.Tomb:
		return p.Tomb
	}
	return p.Count >= q.Count
}

// checkpointStore loads and saves the checkpoint. Load returns nil when there is none. Save
// resolves a concurrent write with merge (re-read, merged, written again) and returns errFenced
// when a newer term wrote the checkpoint.
type checkpointStore interface {
	Load(ctx context.Context) (*checkpoint, error)
	Save(ctx context.Context, cp *checkpoint) (*checkpoint, error)
}

// storageCheckpoints keeps the checkpoint in a storage extension (a single replica).
type storageCheckpoints struct{ client storage.Client }

func (s storageCheckpoints) Load(ctx context.Context) (*checkpoint, error) {
	b, err := s.client.Get(ctx, checkpointKey)
	if err != nil {
		return nil, err
	}
	return decodeCheckpoint(b)
}

func (s storageCheckpoints) Save(ctx context.Context, cp *checkpoint) (*checkpoint, error) {
	return cp, s.client.Set(ctx, checkpointKey, cp.encode())
}

// configMapCheckpoints keeps the checkpoint in a ConfigMap beside the Lease, shared by the
// replicas of a leader-elected Deployment: a new leader continues from it (rule 6).
type configMapCheckpoints struct {
	client          kubernetes.Interface
	namespace, name string
	current         *corev1.ConfigMap
	// conflictBackoff paces the retries after a conflict.
	conflictBackoff BackoffConfig
	// conflicts counts the conflicts met (telemetry).
	conflicts func()
}

// maxConflictRetries bounds the re-read and merge rounds of one Save.
const maxConflictRetries = 8

func (c *configMapCheckpoints) Load(ctx context.Context) (*checkpoint, error) {
	cm, err := c.client.CoreV1().ConfigMaps(c.namespace).Get(ctx, c.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		c.current = nil
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	c.current = cm
	return decodeCheckpoint(cm.BinaryData[checkpointKey])
}

// Save writes cp over the version this term last read or wrote. When another replica wrote in
// between (409 Conflict, or AlreadyExists on create), it re-reads, merges (rule 5.7) and retries
// with backoff; a checkpoint of a newer term fences this one (errFenced), never overwritten. It
// returns what was written: cp, or the merge.
func (c *configMapCheckpoints) Save(ctx context.Context, cp *checkpoint) (*checkpoint, error) {
	b := &backoff{initial: c.conflictBackoff.InitialInterval, max: c.conflictBackoff.MaxInterval}
	for attempt := 0; ; attempt++ {
		err := c.write(ctx, cp)
		if err == nil {
			return cp, nil
		}
		conflict := err
		if !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) {
			return nil, err
		}
		if c.conflicts != nil {
			c.conflicts()
		}
		if attempt >= maxConflictRetries {
			return nil, fmt.Errorf("checkpoint: still conflicting after %d re-reads: %w", attempt, err)
		}
		theirs, lerr := c.Load(ctx)
		if lerr != nil {
			// an unreadable checkpoint is overwritten rather than frozen on
			if c.current == nil {
				return nil, lerr
			}
			theirs = nil
		}
		if cp, err = cp.merge(theirs); err != nil {
			return nil, err
		}
		if attempt > 0 && !sleepCtx(ctx, b.next(conflict)) {
			return nil, ctx.Err()
		}
	}
}

func (c *configMapCheckpoints) write(ctx context.Context, cp *checkpoint) error {
	data := map[string][]byte{checkpointKey: cp.encode()}
	if c.current == nil {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: c.name, Namespace: c.namespace},
			BinaryData: data,
		}
		created, err := c.client.CoreV1().ConfigMaps(c.namespace).Create(ctx, cm, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		c.current = created
		return nil
	}
	cm := c.current.DeepCopy()
	cm.Data, cm.BinaryData = nil, data
	// The update carries the resourceVersion this term last read or wrote: a write by another
	// replica in between makes it fail (409) rather than go back in time.
	updated, err := c.client.CoreV1().ConfigMaps(c.namespace).Update(ctx, cm, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	c.current = updated
	return nil
}
