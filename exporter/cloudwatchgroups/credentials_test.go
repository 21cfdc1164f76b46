package cloudwatchgroups

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroups/internal/metadata"

	"github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch"
)

// TestRoleARN assumes a role through STS (moto's, behind a counting proxy, reached through the
// SDK's standard AWS_ENDPOINT_URL_STS setting) and writes to the local server with the
// temporary credentials.
func TestRoleARN(t *testing.T) {
	awsEnv(t)
	moto := startMoto(t)
	target, err := url.Parse(moto.endpoint)
	require.NoError(t, err)
	var assumeCalls atomic.Int64
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if form, err := url.ParseQuery(string(body)); err == nil && form.Get("Action") == "AssumeRole" {
			assumeCalls.Add(1)
		}
		proxy.ServeHTTP(w, r)
	})}
	stsURL := serveOnLoopback(t, srv)
	t.Setenv("AWS_ENDPOINT_URL_STS", stsURL)

	local := startLocal(t, localcloudwatch.Config{})
	cfg := testConfig(local.endpoint)
	cfg.RoleARN = "arn:aws:iam::123456789012:role/log-writer"
	exp := newTestExporter(t, cfg, component.NewIDWithName(metadata.Type, "role"), componenttest.NewNopHost())
	require.NoError(t, exp.ConsumeLogs(context.Background(), makeLogs(testSources[:1], 5, time.Now(), "n")))
	require.NoError(t, exp.Shutdown(context.Background()))

	require.Equal(t, int64(1), assumeCalls.Load(), "one AssumeRole, credentials cached")
	g, ok := local.local.Group("it.namespace/shop")
	require.True(t, ok)
	require.Equal(t, 5, int(g.Events))
}
