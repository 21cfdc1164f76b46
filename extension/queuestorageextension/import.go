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

// importOutcome is what importFileStorage did with a file.
type importOutcome struct {
	// keys is the number of keys copied.
	keys int
	// skipped is set when the file was left alone because the client already held keys of its
	// own (design.md, rule 14).
	skipped bool
}

// importFileStorage copies every key and value of the file_storage file at path into store
// and then renames the file (design.md, rule 14). A missing file imports nothing. A store
// holding anything but what an interrupted import of this same file copied is not touched:
// the file is left where it is and the outcome says it was skipped.
func importFileStorage(store *seglog.Store, path string, logger *zap.Logger) (importOutcome, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return importOutcome{}, nil
	} else if err != nil {
		return importOutcome{}, err
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return importOutcome{}, fmt.Errorf("opening %s: %w", path, err)
	}
	var out importOutcome
	err = db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(fileStorageBucket)
		key, err := firstKeyNotCopiedFrom(store, b)
		if err != nil || key != "" {
			out.skipped = key != ""
			if out.skipped {
				logger.Warn("not importing a file_storage file: the client already holds keys the file does not hold as they are, so it is in use; the file is left as it is",
					zap.String("file", path), zap.String("first_differing_key", key))
			}
			return err
		}
		out.keys, err = copyBucket(store, b)
		return err
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return out, fmt.Errorf("importing %s: %w", path, err)
	}
	if out.skipped {
		return out, nil
	}
	if err := os.Rename(path, path+importedSuffix); err != nil {
		return out, err
	}
	logger.Info("imported the keys of a file_storage file; it is renamed and no longer read",
		zap.String("file", path), zap.String("renamed_to", path+importedSuffix), zap.Int("keys", out.keys))
	return out, nil
}

// firstKeyNotCopiedFrom returns the first of the store's keys that the bucket b (nil: no
// bucket) does not hold with the same value, "" when every key the store holds is one an
// import of b copied (an empty store included).
func firstKeyNotCopiedFrom(store *seglog.Store, b *bbolt.Bucket) (string, error) {
	for _, key := range store.Keys() {
		var want []byte
		if b != nil {
			want = b.Get([]byte(key))
		}
		if want == nil {
			return key, nil
		}
		got, err := store.Get(key)
		if err != nil {
			return "", err
		}
		if !bytes.Equal(got, want) {
			return key, nil
		}
	}
	return "", nil
}

// copyBucket sets every key and value of b (nil: none) in store, in batches of about
// importBatchBytes, and returns the number of keys.
func copyBucket(store *seglog.Store, b *bbolt.Bucket) (int, error) {
	if b == nil {
		return 0, nil
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
	err := b.ForEach(func(k, v []byte) error {
		// bbolt's slices are valid only inside the transaction.
		ops = append(ops, storage.SetOperation(string(k), bytes.Clone(v)))
		keys++
		size += len(k) + len(v)
		if size >= importBatchBytes {
			return flush()
		}
		return nil
	})
	if err != nil {
		return keys, err
	}
	return keys, flush()
}
