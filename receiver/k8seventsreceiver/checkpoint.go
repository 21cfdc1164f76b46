// SPDX-License-Identifier: Apache-2.0

package k8seventsreceiver

import (
	"context"
	"encoding/json"
	"fmt"

	"go.opentelemetry.io/collector/extension/xextension/storage"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// checkpointKey is the storage key (and ConfigMap data key) of the checkpoint.
const checkpointKey = "checkpoint"

// checkpoint is what was emitted (design.md rule 5.2): the resource version up to which every
// notification of each watch (key: namespace, "" for all) became accepted records, and the
// series finished without a write.
type checkpoint struct {
	ResourceVersions map[string]string         `json:"resource_versions"`
	Tombstones       map[string]tombstoneState `json:"tombstones,omitempty"`
}

// checkpointStore loads and saves the checkpoint. Load returns nil when there is none.
type checkpointStore interface {
	Load(ctx context.Context) (*checkpoint, error)
	Save(ctx context.Context, cp *checkpoint) error
}

func decodeCheckpoint(b []byte) (*checkpoint, error) {
	if len(b) == 0 {
		return nil, nil
	}
	cp := &checkpoint{}
	if err := json.Unmarshal(b, cp); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if cp.ResourceVersions == nil {
		cp.ResourceVersions = map[string]string{}
	}
	return cp, nil
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

func (s storageCheckpoints) Save(ctx context.Context, cp *checkpoint) error {
	b, err := json.Marshal(cp)
	if err != nil {
		return err
	}
	return s.client.Set(ctx, checkpointKey, b)
}

// configMapCheckpoints keeps the checkpoint in a ConfigMap beside the Lease, shared by the
// replicas of a leader-elected Deployment: a new leader continues from it (rule 6).
type configMapCheckpoints struct {
	client          kubernetes.Interface
	namespace, name string
	current         *corev1.ConfigMap
}

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
	return decodeCheckpoint([]byte(cm.Data[checkpointKey]))
}

func (c *configMapCheckpoints) Save(ctx context.Context, cp *checkpoint) error {
	b, err := json.Marshal(cp)
	if err != nil {
		return err
	}
	if c.current == nil {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: c.name, Namespace: c.namespace},
			Data:       map[string]string{checkpointKey: string(b)},
		}
		created, err := c.client.CoreV1().ConfigMaps(c.namespace).Create(ctx, cm, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		c.current = created
		return nil
	}
	cm := c.current.DeepCopy()
	cm.Data = map[string]string{checkpointKey: string(b)}
	// The update carries the resourceVersion this leader last wrote: a write by another replica
	// in between makes it fail rather than go back in time.
	updated, err := c.client.CoreV1().ConfigMaps(c.namespace).Update(ctx, cm, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	c.current = updated
	return nil
}
