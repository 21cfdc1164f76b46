// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exportertest"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/metadata"
)

// TestRestartMakesNoCreateCalls counts the creation calls the local server answers when a
// process starts again and sends to the groups and streams an earlier process used (design.md,
// section 7). With a persistent queue the groups known to exist are kept in its storage, so
// the restart makes no CreateLogStream or CreateLogGroup call; without storage each group costs
// at most the one CreateLogStream of creating ahead (answered ResourceAlreadyExists).
func TestRestartMakesNoCreateCalls(t *testing.T) {
	for _, persistent := range []bool{true, false} {
		t.Run(map[bool]string{true: "persistent queue", false: "memory queue"}[persistent], func(t *testing.T) {
			awsEnv(t)
			b := startLocal(t, localConfig{})
			cfg := testConfig(b.endpoint)
			cfg.ApplySettingsToExistingGroups = false
			dir := t.TempDir()
			run := func() {
				host := componenttest.NewNopHost()
				c := *cfg
				var stopStorage func()
				if persistent {
					fsID, ext := startFileStorage(t, dir)
					c.QueueConfig.Get().StorageID = &fsID
					host = storageHost{exts: map[component.ID]component.Component{fsID: ext}}
					stopStorage = func() { require.NoError(t, ext.Shutdown(context.Background())) }
				}
				tel := componenttest.NewTelemetry()
				defer func() { _ = tel.Shutdown(context.Background()) }()
				set := exportertest.NewNopSettings(metadata.Type)
				set.ID = component.NewIDWithName(metadata.Type, "restart")
				set.TelemetrySettings = tel.NewTelemetrySettings()
				e, err := newExporter(&c, set)
				require.NoError(t, err)
				require.NoError(t, e.start(context.Background(), host))
				require.NoError(t, e.push(context.Background(), makeLogs(testSources, 10, time.Now(), "node-1")))
				require.NoError(t, e.shutdown(context.Background())) // ends the creation ahead too
				if stopStorage != nil {
					stopStorage()
				}
			}
			run()
			first := b.local.Stats().Requests
			groups := len(b.local.Groups())
			require.Equal(t, int64(groups), first["CreateLogGroup"])

			run()
			second := b.local.Stats().Requests
			assert.Equal(t, first["CreateLogGroup"], second["CreateLogGroup"], "CreateLogGroup calls after the restart")
			looks := second["CreateLogStream"] - first["CreateLogStream"]
			if persistent {
				assert.Zero(t, looks, "CreateLogStream calls after the restart")
			} else {
				// At most one per group: a creation ahead that the shutdown ends before its call
				// (the group's send already succeeded) makes none.
				assert.LessOrEqual(t, looks, int64(groups), "CreateLogStream calls after the restart")
			}
			assert.Equal(t, int64(len(testSources)), second["PutLogEvents"]-first["PutLogEvents"], "one PutLogEvents call per stream")
			require.Len(t, b.storedEvents(t), 2*10*len(testSources))
		})
	}
}
