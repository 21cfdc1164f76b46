// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter

import (
	"context"
	"flag"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/exporter/exportertest"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/metadata"
)

// The shipped configuration has no time-based drop (max_elapsed_time 0), so an outage of any
// length runs the same code as this one; the default is just longer than the shipped timeout
// (30 s), the only other clock, so a request times out during the outage and is retried.
var shippedOutage = flag.Duration("cw.outage", 35*time.Second, "outage length of TestShippedConfigSurvivesOutage (e.g. 10m)")

var envRef = regexp.MustCompile(`\$\{env:([A-Z0-9_]+)(?::-([^}]*))?\}`)

// shippedExporterConfig loads the cloudwatch_groups settings of deploy/kubernetes/configmap.yaml
// as shipped, with only the environment filled in.
func shippedExporterConfig(t *testing.T, env map[string]string) *Config {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("..", "..", "deploy", "kubernetes", "configmap.yaml"))
	require.NoError(t, err)
	text, ok := cm.Get("data::config.yaml").(string)
	require.True(t, ok, "configmap.yaml has no data.config.yaml")
	text = envRef.ReplaceAllStringFunc(text, func(ref string) string {
		m := envRef.FindStringSubmatch(ref)
		if v, ok := env[m[1]]; ok {
			return v
		}
		return m[2]
	})
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	full, err := confmaptest.LoadConf(path)
	require.NoError(t, err)
	sub, err := full.Sub("exporters::cloudwatch_groups")
	require.NoError(t, err)
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	require.NoError(t, sub.Unmarshal(cfg))
	require.NoError(t, cfg.Validate())
	return cfg
}

// TestShippedConfigSurvivesOutage runs the DaemonSet's exporter settings (persistent queue,
// retries, timeout) through a CloudWatch outage (every call answered 503, as an unreachable
// service or VPC endpoint is) longer than the request timeout: nothing is dropped, and every
// event arrives once the service is back.
func TestShippedConfigSurvivesOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("outage of -cw.outage")
	}
	awsEnv(t)
	b := startLocal(t, localConfig{})
	cfg := shippedExporterConfig(t, map[string]string{"AWS_REGION": "us-east-1", "CLUSTER_NAME": "shipped", "K8S_NODE_NAME": "node-1"})
	require.Zero(t, cfg.BackOffConfig.MaxElapsedTime, "the shipped configuration retries until delivered")
	require.True(t, cfg.QueueConfig.Get().BlockOnOverflow, "a full queue pauses the receiver")
	require.NotNil(t, cfg.QueueConfig.Get().StorageID, "the queue survives restarts")

	var down atomic.Bool
	var refused atomic.Int64
	cfg.Endpoint = outageProxy(t, b.endpoint, &down, &refused)

	fsID, ext := startFileStorage(t, t.TempDir())
	cfg.QueueConfig.Get().StorageID = &fsID
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	set := exportertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	exp, err := NewFactory().CreateLogs(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(context.Background(), storageHost{exts: map[component.ID]component.Component{fsID: ext}}))

	down.Store(true)
	const perSource = 200
	require.NoError(t, exp.ConsumeLogs(context.Background(), makeLogs(testSources, perSource, time.Now(), "node-1")))
	require.Eventually(t, func() bool { return refused.Load() > 0 }, 30*time.Second, 10*time.Millisecond)
	outageEnd := time.Now().Add(*shippedOutage)
	for time.Now().Before(outageEnd) {
		_, err := tel.GetMetric("otelcol_exporter_cloudwatch_groups_events_rejected")
		require.Error(t, err, "events rejected during the outage")
		time.Sleep(time.Second) // the outage's length is what is tested
	}
	down.Store(false)

	require.Eventually(t, func() bool { return len(b.storedEvents(t)) >= perSource*len(testSources) }, 2*time.Minute, 100*time.Millisecond)
	require.NoError(t, exp.Shutdown(context.Background()))
	require.NoError(t, ext.Shutdown(context.Background()))
	require.Len(t, b.storedEvents(t), perSource*len(testSources), "every event once")
	_, err = tel.GetMetric("otelcol_exporter_cloudwatch_groups_events_rejected")
	require.Error(t, err, "nothing rejected")
}

// outageProxy serves endpoint through a loopback proxy that answers every call 503 (as an
// unreachable service or VPC endpoint is) while down is set, counting them in refused.
func outageProxy(t *testing.T, endpoint string, down *atomic.Bool, refused *atomic.Int64) string {
	t.Helper()
	target, err := url.Parse(endpoint)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	return serveOnLoopback(t, &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			refused.Add(1)
			http.Error(w, `{"__type":"ServiceUnavailableException","message":"down"}`, http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	})})
}
