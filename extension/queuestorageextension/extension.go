// SPDX-License-Identifier: Apache-2.0

package queuestorageextension

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"

	"github.com/otelcol-k8s/otelcol-k8s/extension/queuestorageextension/internal/metadata"
	"github.com/otelcol-k8s/otelcol-k8s/extension/queuestorageextension/internal/seglog"
)

type queueStorage struct {
	cfg       *Config
	logger    *zap.Logger
	telemetry *metadata.TelemetryBuilder

	mu      sync.Mutex
	clients map[*client]struct{}
}

var _ storage.Extension = (*queueStorage)(nil)

func newQueueStorage(cfg *Config, set extension.Settings) (*queueStorage, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return &queueStorage{cfg: cfg, logger: set.Logger, telemetry: tb, clients: map[*client]struct{}{}}, nil
}

// Start checks the directory, creating it when configured to.
func (q *queueStorage) Start(context.Context, component.Host) error {
	if q.cfg.CreateDirectory {
		if err := os.MkdirAll(q.cfg.Directory, 0o750); err != nil {
			return fmt.Errorf("queue_storage: directory: %w", err)
		}
	}
	info, err := os.Stat(q.cfg.Directory)
	if err != nil {
		return fmt.Errorf("queue_storage: directory: %w", err)
	}
	if !info.IsDir() {
		return fmt.Errorf("queue_storage: directory %s is not a directory", q.cfg.Directory)
	}
	return nil
}

// Shutdown closes the clients still open.
func (q *queueStorage) Shutdown(context.Context) error {
	q.mu.Lock()
	clients := q.clients
	q.clients = map[*client]struct{}{}
	q.mu.Unlock()
	var errs []error
	for c := range clients {
		errs = append(errs, c.store.Close())
	}
	q.telemetry.Shutdown()
	return errors.Join(errs...)
}

// GetClient opens the log of one component's storage (design.md, rules 1 and 10).
func (q *queueStorage) GetClient(_ context.Context, kind component.Kind, id component.ID, storageName string) (storage.Client, error) {
	dir := filepath.Join(q.cfg.Directory, clientDirName(kind, id, storageName))
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("queue_storage: client directory: %w", err)
	}
	store, err := seglog.Open(dir, seglog.Options{
		SegmentSize: q.cfg.SegmentSize,
		Fsync:       q.cfg.Fsync,
		Logger:      q.logger.With(zap.String("directory", dir)),
		Metrics:     metrics{q.telemetry},
	})
	if err != nil {
		return nil, err
	}
	if q.cfg.ImportFileStorage != "" {
		old := filepath.Join(q.cfg.ImportFileStorage, fileStorageName(kind, id, storageName))
		out, err := importFileStorage(store, old, q.logger)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("queue_storage: import_file_storage: %w", err), store.Close())
		}
		q.telemetry.ExtensionQueueStorageImportedKeys.Add(context.Background(), int64(out.keys))
		skipped := int64(0) // added even when 0, so that the counter is there to watch
		if out.skipped {
			skipped = 1
		}
		q.telemetry.ExtensionQueueStorageImportSkippedFiles.Add(context.Background(), skipped)
	}
	c := &client{store: store, owner: q}
	q.mu.Lock()
	q.clients[c] = struct{}{}
	q.mu.Unlock()
	return c, nil
}

// clientDirName names a client's directory as file_storage names its files, every byte outside
// [A-Za-z0-9._-] written as '~' and two hex digits, and '_' too in the name and the storage
// name: a kind has no '_', so the name is one-to-one (design.md, rule 1).
// A name longer than maxDirName bytes becomes the kind, the type and the SHA-256 of the name.
func clientDirName(kind component.Kind, id component.ID, storageName string) string {
	prefix := strings.ToLower(kind.String()) + "_" + escapeName(id.Type().String(), false)
	name := prefix + "_" + escapeName(id.Name(), true) + "_" + escapeName(storageName, true)
	if len(name) <= maxDirName {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return prefix + "_~" + hex.EncodeToString(sum[:])
}

// maxDirName keeps a client's directory name within the 255 bytes file systems allow.
const maxDirName = 200

func escapeName(s string, underscore bool) string {
	var b strings.Builder
	for i := range len(s) {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.' && i > 0, c == '-', c == '_' && !underscore:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "~%02x", c)
		}
	}
	return b.String()
}

type client struct {
	store *seglog.Store
	owner *queueStorage
}

var _ storage.Client = (*client)(nil)

func (c *client) Get(ctx context.Context, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return c.store.Get(key)
}

func (c *client) Set(ctx context.Context, key string, value []byte) error {
	return c.Batch(ctx, storage.SetOperation(key, value))
}

func (c *client) Delete(ctx context.Context, key string) error {
	return c.Batch(ctx, storage.DeleteOperation(key))
}

func (c *client) Batch(ctx context.Context, ops ...*storage.Operation) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.store.Batch(ops...)
}

func (c *client) Close(context.Context) error {
	c.owner.mu.Lock()
	delete(c.owner.clients, c)
	c.owner.mu.Unlock()
	return c.store.Close()
}

// metrics records the log's telemetry in the component's instruments.
type metrics struct{ tb *metadata.TelemetryBuilder }

func (m metrics) BytesWritten(n int64) {
	m.tb.ExtensionQueueStorageBytesWritten.Add(context.Background(), n)
}

func (m metrics) BytesRead(n int64) {
	m.tb.ExtensionQueueStorageBytesRead.Add(context.Background(), n)
}

func (m metrics) Segments(delta int64) {
	m.tb.ExtensionQueueStorageSegments.Add(context.Background(), delta)
}

func (m metrics) LiveBytes(delta int64) {
	m.tb.ExtensionQueueStorageLiveBytes.Add(context.Background(), delta)
}

func (m metrics) Compaction() {
	m.tb.ExtensionQueueStorageCompactions.Add(context.Background(), 1)
}

func (m metrics) RecoveryDropped(n int64) {
	m.tb.ExtensionQueueStorageRecoveryDroppedBytes.Add(context.Background(), n)
}

func (m metrics) ReadCorrupt() {
	m.tb.ExtensionQueueStorageCorruptReads.Add(context.Background(), 1)
}
