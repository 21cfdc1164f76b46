// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter

// Groups known to exist, kept across restarts in the persistent queue's storage extension
// (design.md, section 7): a process that starts again sends to groups it used before without
// asking CloudWatch about them first.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"
)

const (
	// knownGroupsClient is the storage client's name (the queue's client is named after the
	// signal, "logs").
	knownGroupsClient = "known_groups"
	knownGroupsKey    = "groups"
	// knownGroupsHeader starts the stored value: a version line, then one group name per line
	// (a group name has no newline).
	knownGroupsHeader = "cloudwatch_groups known groups 1\n"
	// knownGroupsLimit bounds the names kept; beyond it new groups are not remembered.
	knownGroupsLimit = 10_000
)

// knownGroups remembers, in a storage client, the groups the sender learned exist. Writes run
// in one goroutine, so the send path that learns a group never waits for the storage.
type knownGroups struct {
	client storage.Client
	logger *zap.Logger

	mu     sync.Mutex
	names  map[string]bool
	dirty  bool
	closed bool

	wake chan struct{}
	done chan struct{}
}

// openKnownGroups opens the client of the storage extension id and reads the names stored by
// earlier processes. A value it cannot read is logged and replaced at the next write.
func openKnownGroups(ctx context.Context, host component.Host, id component.ID, exporterID component.ID, logger *zap.Logger) (*knownGroups, []string, error) {
	ext, ok := host.GetExtensions()[id]
	if !ok {
		return nil, nil, fmt.Errorf("storage extension %s not found", id)
	}
	se, ok := ext.(storage.Extension)
	if !ok {
		return nil, nil, fmt.Errorf("extension %s is not a storage extension", id)
	}
	client, err := se.GetClient(ctx, component.KindExporter, exporterID, knownGroupsClient)
	if err != nil {
		return nil, nil, err
	}
	k := &knownGroups{client: client, logger: logger, names: map[string]bool{}, wake: make(chan struct{}, 1), done: make(chan struct{})}
	raw, err := client.Get(ctx, knownGroupsKey)
	if err != nil {
		_ = client.Close(ctx)
		return nil, nil, err
	}
	stored, err := parseKnownGroups(raw)
	if err != nil {
		logger.Warn("Ignoring the stored list of known log groups", zap.Error(err))
	}
	for _, g := range stored {
		k.names[g] = true
	}
	go k.run(context.WithoutCancel(ctx)) // the writes outlive start
	return k, stored, nil
}

// parseKnownGroups reads a stored value; nil (never written) is an empty list.
func parseKnownGroups(raw []byte) ([]string, error) {
	if raw == nil {
		return nil, nil
	}
	body, ok := strings.CutPrefix(string(raw), knownGroupsHeader)
	if !ok {
		return nil, errors.New("unknown format")
	}
	var out []string
	for name := range strings.SplitSeq(body, "\n") {
		if name == "" {
			continue
		}
		if len(out) == knownGroupsLimit {
			break
		}
		out = append(out, name)
	}
	return out, nil
}

func formatKnownGroups(names []string) []byte {
	slices.Sort(names)
	return []byte(knownGroupsHeader + strings.Join(names, "\n"))
}

// add remembers group; the writer stores the list soon after.
func (k *knownGroups) add(group string) {
	k.mu.Lock()
	if k.closed || k.names[group] || len(k.names) >= knownGroupsLimit || strings.Contains(group, "\n") {
		k.mu.Unlock()
		return
	}
	k.names[group] = true
	k.dirty = true
	select { // under mu: close cannot close wake in between
	case k.wake <- struct{}{}:
	default:
	}
	k.mu.Unlock()
}

func (k *knownGroups) run(ctx context.Context) {
	defer close(k.done)
	for range k.wake {
		k.write(ctx)
	}
}

// write stores the list when it changed since the last write.
func (k *knownGroups) write(ctx context.Context) {
	k.mu.Lock()
	if !k.dirty {
		k.mu.Unlock()
		return
	}
	k.dirty = false
	names := make([]string, 0, len(k.names))
	for g := range k.names {
		names = append(names, g)
	}
	k.mu.Unlock()
	if err := k.client.Set(ctx, knownGroupsKey, formatKnownGroups(names)); err != nil {
		// The groups are asked about again after a restart; nothing else depends on it.
		k.logger.Warn("Storing the list of known log groups failed", zap.Error(err))
	}
}

// close stores what is left and closes the client.
func (k *knownGroups) close(ctx context.Context) error {
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return nil
	}
	k.closed = true
	close(k.wake)
	k.mu.Unlock()
	<-k.done
	k.write(ctx)
	return k.client.Close(ctx)
}
