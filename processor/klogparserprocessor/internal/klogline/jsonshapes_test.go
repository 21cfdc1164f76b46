// SPDX-License-Identifier: Apache-2.0

package klogline

import (
	"testing"
	"time"
)

// TestJSONShapesOfRealLoggers tells component-base JSON from application JSON on lines
// written by hand after the shapes real loggers produce (key order, ts units, which keys are
// present), as found in public issue threads and the loggers' documentation:
//
//   - kubelet 1.21 with --logging-format=json, info records without caller
//     ("Fix json log format config bug", kubernetes/kubernetes#100409);
//   - kubelet 1.22+ and cert-manager with caller ("kubelet: activate logging sooner",
//     kubernetes/kubernetes#104997; "Logging-format json sometimes writes plaintext messages",
//     cert-manager/cert-manager#6768);
//   - the logging benchmark data of k8s.io/component-base/logs/benchmark (records without ts);
//   - zap production and controller-runtime (the structured logging KEP's zap example;
//     ray-project/kuberay#1912), logrus (its README), bunyan (always level and v:0, "How to
//     remove hostname and pid from logs?", trentm/node-bunyan#187), pino (level, time in
//     milliseconds; v:1 before pino 7), zerolog, slog, winston.
func TestJSONShapesOfRealLoggers(t *testing.T) {
	const none = -1
	ms := func(sec int64, usec int64) time.Time { return time.Unix(sec, usec*1000).UTC() }
	tests := []struct {
		name    string
		line    string
		want    Format
		sev     Severity
		verbose int64
		time    time.Time
		msg     string
	}{
		// component-base JSON, Kubernetes 1.19-1.21: no caller.
		{
			"kubelet 1.21 flag dump (Infof, trailing newline in msg)",
			`{"ts":1618993461233.1785,"msg":"FLAG: --cgroup-driver=\"systemd\"\n","v":1}`,
			FormatJSON, SeverityInfo, 1, ms(1618993461, 233178), "FLAG: --cgroup-driver=\"systemd\"\n",
		},
		{
			"kubelet 1.20 InfoS with an object reference",
			`{"ts":1608123456789.123,"msg":"Pod status updated","v":2,"pod":{"name":"coredns-74ff55c5b-x8k2p","namespace":"kube-system"},"status":"ready"}`,
			FormatJSON, SeverityInfo, 2, ms(1608123456, 789123), "Pod status updated",
		},
		{
			"controller-manager 1.21 v 0",
			`{"ts":1619712345678.9102,"msg":"Waiting for caches to sync for garbage collector\n","v":0}`,
			FormatJSON, SeverityInfo, 0, ms(1619712345, 678910), "Waiting for caches to sync for garbage collector\n",
		},
		{
			"kubelet 1.21 ErrorS: err, no v, no caller",
			`{"ts":1619712345679.1234,"msg":"Failed to get system container stats","containerName":"/system.slice/kubelet.service","err":"failed to get cgroup stats for \"/system.slice/kubelet.service\": failed to get container info"}`,
			FormatJSON, SeverityError, none, ms(1619712345, 679123), "Failed to get system container stats",
		},
		{
			"controller-manager 1.20 ErrorS with err first and null",
			`{"ts":1607000000123.5,"msg":"Error syncing","err":null,"key":"default/web"}`,
			FormatJSON, SeverityError, none, ms(1607000000, 123500), "Error syncing",
		},
		{
			"KEP-era float seconds with v",
			`{"ts":1580306777.04728,"v":4,"msg":"Pod status updated","pod":{"name":"nginx-1","namespace":"default"}}`,
			FormatJSON, SeverityInfo, 4, ms(1580306777, 47280), "Pod status updated",
		},
		{
			"benchmark data: v and msg, no ts",
			`{"v":0,"msg":"Pod status updated","pod":{"name":"nginx-1","namespace":"default"},"status":"ready"}`,
			FormatJSON, SeverityInfo, 0,
			time.Time{},
			"Pod status updated",
		},
		{
			"benchmark data: verbosity 3, msg first",
			`{"msg":"Creating container","v":3,"container":"etcd"}`,
			FormatJSON, SeverityInfo, 3,
			time.Time{},
			"Creating container",
		},
		// component-base JSON, Kubernetes 1.22 and later: caller.
		{
			"kubelet 1.22 ErrorS with caller",
			`{"ts":1631610094233.7605,"caller":"app/server.go:276","msg":"Failed to construct kubelet dependencies","err":"error reading /var/lib/kubelet/pki/kubelet.key, certificate and key must be supplied as a pair"}`,
			FormatJSON, SeverityError, none, ms(1631610094, 233761), "Failed to construct kubelet dependencies",
		},
		{
			"cert-manager (component-base) with caller and v",
			`{"ts":1708340302771.8833,"caller":"leaderelection/leaderelection.go:250","msg":"attempting to acquire leader lease kube-system/cert-manager-controller...","v":0}`,
			FormatJSON, SeverityInfo, 0, ms(1708340302, 771883), "attempting to acquire leader lease kube-system/cert-manager-controller...",
		},

		// Application JSON: never klog with the default formats.
		{
			"zap production (KEP example)",
			`{"level":"info","ts":1580306777.04728,"caller":"zapr@v0.1.1/zapr.go:69","msg":"HTTP","method":"GET","uri":"/api/v1/namespaces/kube-system/pods","latency":"1.512ms","status":200}`,
			FormatNone, SeverityUnset, none,
			time.Time{},
			"",
		},
		{
			"zap production error with stacktrace",
			`{"level":"error","ts":1712345678.123456,"caller":"server/handler.go:88","msg":"request failed","error":"context deadline exceeded","stacktrace":"main.handle\n\t/app/server/handler.go:88\nnet/http.HandlerFunc.ServeHTTP\n\t/usr/local/go/src/net/http/server.go:2136"}`,
			FormatNone, SeverityUnset, none,
			time.Time{},
			"",
		},
		{
			"zap with epoch-millis encoder and a level",
			`{"level":"INFO","ts":1712345678123,"msg":"listening","v":1,"err":null}`,
			FormatNone, SeverityUnset, none,
			time.Time{},
			"",
		},
		{
			"controller-runtime (zap, ISO ts)",
			`{"level":"info","ts":"2024-02-10T01:53:57.559Z","logger":"controller-runtime.metrics","msg":"Serving metrics server","bindAddress":":8080","secure":false}`,
			FormatNone, SeverityUnset, none,
			time.Time{},
			"",
		},
		{
			"logrus JSONFormatter",
			`{"animal":"walrus","level":"info","msg":"A group of walrus emerges from the ocean","size":10,"time":"2024-03-10T19:57:38-04:00"}`,
			FormatNone, SeverityUnset, none,
			time.Time{},
			"",
		},
		{
			"bunyan: numeric level, v 0",
			`{"name":"checkout","hostname":"checkout-6d9f7b7c4-2lq8v","pid":1,"level":30,"msg":"order placed","time":"2024-05-01T12:00:00.000Z","v":0}`,
			FormatNone, SeverityUnset, none,
			time.Time{},
			"",
		},
		{
			"pino 6: numeric level, time in ms, v 1",
			`{"level":30,"time":1531171074631,"pid":657,"hostname":"api-7f9c","msg":"hello world","v":1}`,
			FormatNone, SeverityUnset, none,
			time.Time{},
			"",
		},
		{
			"pino 7 and later",
			`{"level":50,"time":1700000000123,"pid":1,"hostname":"api-7f9c","err":{"type":"Error","message":"boom","stack":"Error: boom\n    at main (/app/index.js:3:9)"},"msg":"boom"}`,
			FormatNone, SeverityUnset, none,
			time.Time{},
			"",
		},
		{
			"zerolog",
			`{"level":"info","time":1516134303,"message":"hello world"}`,
			FormatNone, SeverityUnset, none,
			time.Time{},
			"",
		},
		{
			"slog JSONHandler",
			`{"time":"2024-03-10T12:00:00.000000001Z","level":"INFO","msg":"started","v":2}`,
			FormatNone, SeverityUnset, none,
			time.Time{},
			"",
		},
		{
			"winston json",
			`{"level":"error","message":"connection lost","service":"billing"}`,
			FormatNone, SeverityUnset, none,
			time.Time{},
			"",
		},
		{
			"plain object: msg only",
			`{"msg":"hello"}`,
			FormatNone, SeverityUnset, none,
			time.Time{},
			"",
		},
		{
			"plain object: ts in seconds and msg",
			`{"ts":1700000000,"msg":"started"}`,
			FormatNone, SeverityUnset, none,
			time.Time{},
			"",
		},
		{
			"plain object: ts in ms and msg, nothing of klog's",
			`{"ts":1700000000000,"msg":"tick","count":3}`,
			FormatNone, SeverityUnset, none,
			time.Time{},
			"",
		},
		{
			"plain object: ts in seconds and err (only component-base writes ms with err)",
			`{"ts":1700000000.25,"msg":"failed","err":"boom"}`,
			FormatNone, SeverityUnset, none,
			time.Time{},
			"",
		},
		{
			"plain object: string ts with v",
			`{"ts":"2026-03-10T00:00:00Z","msg":"x","v":1}`,
			FormatNone, SeverityUnset, none,
			time.Time{},
			"",
		},
		{
			"plain object: string v",
			`{"msg":"x","v":"1"}`,
			FormatNone, SeverityUnset, none,
			time.Time{},
			"",
		},
		{
			"plain object: negative v",
			`{"ts":1700000000000,"msg":"x","v":-1}`,
			FormatNone, SeverityUnset, none,
			time.Time{},
			"",
		},
		{
			"plain object: fractional v",
			`{"msg":"x","v":1.5}`,
			FormatNone, SeverityUnset, none,
			time.Time{},
			"",
		},
		{
			"plain object: message instead of msg",
			`{"message":"x","v":1,"ts":1700000000000}`,
			FormatNone, SeverityUnset, none,
			time.Time{},
			"",
		},
	}
	var p Parser
	var rec Record
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := p.Parse(tt.line, ref2026, &rec)
			if got != tt.want || rec.Severity != tt.sev {
				t.Fatalf("format %v severity %v, want %v %v", got, rec.Severity, tt.want, tt.sev)
			}
			if got == FormatNone {
				return
			}
			if rec.Partial() {
				t.Errorf("partial: %s", rec.Problem)
			}
			if rec.Message != tt.msg {
				t.Errorf("msg %q, want %q", rec.Message, tt.msg)
			}
			if rec.HasVerbose {
				if rec.Verbosity != tt.verbose {
					t.Errorf("verbosity %d, want %d", rec.Verbosity, tt.verbose)
				}
			} else if tt.verbose != none {
				t.Errorf("no verbosity, want %d", tt.verbose)
			}
			if rec.HasTime != !tt.time.IsZero() || !rec.Time.Equal(tt.time) {
				t.Errorf("time %v (%v), want %v", rec.Time, rec.HasTime, tt.time)
			}
		})
	}
}
