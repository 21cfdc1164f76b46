// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter

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
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/metadata"
)

// TestRoleARN assumes a role through STS (moto's, behind a counting proxy, reached through the
// SDK's standard AWS_ENDPOINT_URL_STS setting) and writes to the local server with the
// temporary credentials.
func TestRoleARN(t *testing.T) {
	var assumeCalls atomic.Int64
	stsProxy(t, func(http.ResponseWriter) bool {
		assumeCalls.Add(1)
		return false
	})

	// moto's STS issues credentials the local server does not know: no signature check.
	local := startLocal(t, localConfig{Credentials: map[string]string{}})
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

// stsIDPError is STS's answer (awsQuery protocol) when the identity provider cannot be reached.
const stsIDPError = `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <Error><Type>Sender</Type><Code>IDPCommunicationError</Code><Message>The identity provider could not be reached.</Message></Error>
  <RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId>
</ErrorResponse>`

// TestCredentialsFailureIsTransient: STS answers its first AssumeRole calls with a 400
// IDPCommunicationError; the batch waits for credentials instead of being dropped as a
// permanent 400, and every event is stored once.
func TestCredentialsFailureIsTransient(t *testing.T) {
	var failures atomic.Int64
	failures.Store(6) // more than the SDK's own three attempts per refresh
	stsProxy(t, func(w http.ResponseWriter) bool {
		if failures.Add(-1) < 0 {
			return false
		}
		w.Header().Set("Content-Type", "text/xml")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, stsIDPError)
		return true
	})

	// moto's STS issues credentials the local server does not know: no signature check.
	local := startLocal(t, localConfig{Credentials: map[string]string{}})
	cfg := testConfig(local.endpoint)
	cfg.RoleARN = "arn:aws:iam::123456789012:role/log-writer"
	e, tel := startExporter(t, cfg, nil)
	var err error
	require.NoError(t, pushFor(e, mustConvert(t, e, makeLogs(testSources[:1], 5, time.Now(), "n")), 30*time.Second))

	g, ok := local.local.Group("it.namespace/shop")
	require.True(t, ok)
	require.Equal(t, 5, int(g.Events))
	_, err = tel.GetMetric("otelcol_exporter_cloudwatch_groups_events_rejected")
	require.Error(t, err, "nothing rejected")
	require.Negative(t, failures.Load(), "STS failed first")
}

func mustConvert(t *testing.T, e *cwExporter, ld plog.Logs) xexporterhelper.Request {
	t.Helper()
	req, err := e.convert(context.Background(), ld)
	require.NoError(t, err)
	return req
}

// stsProxy starts moto and points AWS_ENDPOINT_URL_STS at a proxy to it that shows every
// AssumeRole call to onAssume first; onAssume returns true when it answered the call itself.
func stsProxy(t *testing.T, onAssume func(http.ResponseWriter) bool) {
	t.Helper()
	awsEnv(t)
	moto := startMoto(t)
	target, err := url.Parse(moto.endpoint)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if form, err := url.ParseQuery(string(body)); err == nil && form.Get("Action") == "AssumeRole" && onAssume(w) {
			return
		}
		proxy.ServeHTTP(w, r)
	})}
	t.Setenv("AWS_ENDPOINT_URL_STS", serveOnLoopback(t, srv))
}
