// SPDX-License-Identifier: Apache-2.0

package queuestorageextension

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"go.etcd.io/bbolt"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"

	"github.com/otelcol-k8s/otelcol-k8s/extension/queuestorageextension/internal/seglog"
)

// importedSuffix is appended to a file_storage file once its keys are imported (design.md,
// rule 14).
const importedSuffix = ".imported"

// importBatchBytes bounds the keys and values copied in one batch (one record group).
const importBatchBytes = 4 << 20

// fileStorageBucket is the bbolt bucket file_storage keeps a client's keys in.
var fileStorageBucket = []byte("default")

// fileStorageName is the name file_storage (contrib v0.160) gives the file of a client:
// kind, type, name and, when set, the storage name joined with '_', every character outside
// [A-Za-z0-9._-] written as '~' and four hex digits of its code point.
func fileStorageName(kind component.Kind, id component.ID, storageName string) string {
	raw := strings.ToLower(kind.String()) + "_" + id.Type().String() + "_" + id.Name()
	if storageName != "" {
		raw += "_" + storageName
	}
	var b strings.Builder
	for _, r := range raw {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, "~%04X", r)
		}
	}
	return b.String()
}

// importFileStorage copies every key and value of the file_storage file at path into store
// and then renames the file (design.md, rule 14). A missing file imports nothing. It returns
// the number of keys copied.
func importFileStorage(store *seglog.Store, path string, logger *zap.Logger) (int, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	} else if err != nil {
		return 0, err
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return 0, fmt.Errorf("opening %s: %w", path, err)
	}
	keys, size := 0, 0
	var ops []*storage.Operation
	flush := func() error {
		if len(ops) == 0 {
			return nil
		}
		err := store.Batch(ops...)
		ops, size = ops[:0], 0
		return err
	}
	err = db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(fileStorageBucket)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			// bbolt's slices are valid only inside the transaction.
			ops = append(ops, storage.SetOperation(string(k), bytes.Clone(v)))
			keys++
			size += len(k) + len(v)
			if size >= importBatchBytes {
				return flush()
			}
			return nil
		})
	})
	if err == nil {
		err = flush()
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return keys, fmt.Errorf("importing %s: %w", path, err)
	}
	if err := os.Rename(path, path+importedSuffix); err != nil {
		return keys, err
	}
	logger.Info("imported the keys of a file_storage file; it is renamed and no longer read",
		zap.String("file", path), zap.String("renamed_to", path+importedSuffix), zap.Int("keys", keys))
	return keys, nil
}
