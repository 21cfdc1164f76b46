// SPDX-License-Identifier: Apache-2.0

package objectref

import (
	"bytes"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	jsonlog "k8s.io/component-base/logs/json"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
)

// errSync is the error the node mix's failing call reports.
type errSync struct{}

func (errSync) Error() string { return "context deadline exceeded" }

// appLines are an application container's lines as the node simulator (testbed/nodesim) and
// real applications write them: plain text, JSON without ts (nodesim), zap production JSON (with
// level, ts and caller), a JSON logger with ts and msg, logrus.
var appLines = []string{
	`ERROR upstream timeout after 2731ms`,
	`{"level":"info","msg":"request served","path":"/cart/items","status":200,"duration_ms":41}`,
	`INFO request served path=/cart/items status=200`,
	`{"level":"info","ts":1795253400.5,"caller":"search/handler.go:88","msg":"query served","service":"search","node":"worker-7","pod":"prod/search-0"}`,
	`{"ts":1795253400.6,"msg":"reindex","service":"search","namespace":"prod","user":{"name":"alice","namespace":"team-a"}}`,
	`{"level":"warning","msg":"slow query","time":"2026-11-21T09:30:00Z","node":"worker-7"}`,
}

// nodeMixLines returns the node simulator's mix (testbed/nodesim's default: klog text, klog
// JSON and application containers weighted 2:1:2), with nodesim's four klog calls logged by the
// real klog text and component-base JSON loggers, and the application lines above.
func nodeMixLines(tb testing.TB) []string {
	tb.Helper()
	var buf bytes.Buffer
	text := textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(&buf), textlogger.Verbosity(4)))
	json, _ := jsonlog.NewJSONLogger(4, zapcore.AddSync(&buf), nil, nil)
	take := func() string {
		s := strings.TrimSuffix(buf.String(), "\n")
		buf.Reset()
		if strings.Contains(s, "\n") {
			tb.Fatalf("a call logged more than one line: %q", s)
		}
		return s
	}
	pod := klog.KRef("shop", "web-7")
	calls := func(lg logr.Logger) []string {
		lg.Info("Successfully bound pod to node", "pod", pod, "node", klog.KRef("", "node-1"), "evaluatedNodes", 3)
		a := take()
		lg.V(4).Info("Started syncing deployment", "deployment", klog.KRef("shop", "web"), "startTime", "2026-11-21 09:30:00")
		b := take()
		lg.Error(errSync{}, "Error syncing pod, skipping", "pod", pod, "podUID", "0a4e7c2d-3b1f-4d5a-8e6c-9f2b1a0d3e47")
		c := take()
		lg.V(2).Info("Event occurred", "object", pod, "kind", "Pod", "reason", "Scheduled", "type", "Normal")
		return []string{a, b, c, take()}
	}
	klogText, klogJSON := calls(text), calls(json)
	// Containers weighted 2:1:2 as nodesim's default, as many lines each: 8 klog text lines,
	// 4 klog JSON lines, 8 application lines.
	mix := append(append(append([]string{}, klogText...), klogText...), klogJSON...)
	mix = append(mix, appLines...)
	mix = append(mix, appLines[:2]...)
	return mix
}
