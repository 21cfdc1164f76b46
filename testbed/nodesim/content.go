// SPDX-License-Identifier: Apache-2.0

package nodesim

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	logsjson "k8s.io/component-base/logs/json"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
)

// Format is what a container logs.
type Format string

// The formats of simulated containers.
const (
	FormatKlogText Format = "klog-text" // k8s.io/klog/v2 text lines on stderr
	FormatKlogJSON Format = "klog-json" // k8s.io/component-base JSON lines on stderr
	FormatPlain    Format = "plain"     // application lines, mostly stdout, errors on stderr
)

// Token is the unique mark of a line: container id and its sequence number (from 1).
func Token(containerID string, seq int64) string {
	return fmt.Sprintf("nodesim:%s:%d", containerID, seq)
}

// producer makes one container's line contents with the real logger of its format.
type producer struct {
	format Format
	out    *bytes.Buffer
	log    logr.Logger
	rnd    *rand.Rand
	ns     string
	node   string
	// refNamespaces are the namespaces of the objects its lines mention: its own, or every
	// namespace for a control-plane component (a scheduler logs pods of all namespaces).
	refNamespaces []string
	// self, when set, is the pod every pod reference of its lines names (a named pod), and
	// selfUID its uid.
	self    *klog.ObjectRef
	selfUID string
}

func newProducer(f Format, ns, node string, namespaces []string, rnd *rand.Rand) *producer {
	p := &producer{format: f, out: new(bytes.Buffer), rnd: rnd, ns: ns, node: node, refNamespaces: []string{ns}}
	if strings.HasPrefix(ns, "kube-") {
		p.refNamespaces = namespaces
	}
	switch f {
	case FormatKlogText:
		p.log = textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(p.out), textlogger.Verbosity(4)))
	case FormatKlogJSON:
		p.log, _ = logsjson.NewJSONLogger(4, zapcore.AddSync(p.out), nil, nil)
	}
	return p
}

// take returns what the logger wrote for one call, without the final newline.
func (p *producer) take() []byte {
	b := bytes.TrimRight(p.out.Bytes(), "\n")
	out := append([]byte(nil), b...)
	p.out.Reset()
	return out
}

var errTimeout = errors.New("context deadline exceeded")

// normal is an ordinary line: the stream it goes to and its content.
func (p *producer) normal(token string) (string, []byte) {
	pod := klog.KRef(p.refNamespaces[p.rnd.IntN(len(p.refNamespaces))], fmt.Sprintf("web-%d", p.rnd.IntN(50)))
	podUID := "0a4e7c2d-3b1f-4d5a-8e6c-9f2b1a0d3e47"
	if p.self != nil {
		pod, podUID = *p.self, p.selfUID
	}
	switch p.format {
	case FormatKlogText, FormatKlogJSON:
		switch p.rnd.IntN(4) {
		case 0:
			p.log.Info("Successfully bound pod to node "+token, "pod", pod, "node", klog.KRef("", p.node), "evaluatedNodes", 3)
		case 1:
			p.log.V(4).Info("Started syncing deployment "+token, "deployment", klog.KRef(p.ns, "web"), "startTime", "2026-11-21 09:30:00")
		case 2:
			p.log.Error(errTimeout, "Error syncing pod, skipping "+token, "pod", pod, "podUID", podUID)
		default:
			p.log.V(2).Info("Event occurred "+token, "object", pod, "kind", "Pod", "reason", "Scheduled", "type", "Normal")
		}
		return "stderr", p.take()
	default:
		switch p.rnd.IntN(5) {
		case 0:
			return "stderr", fmt.Appendf(nil, "ERROR upstream timeout after %dms %s", 1000+p.rnd.IntN(4000), token)
		case 1, 2:
			return "stdout", fmt.Appendf(nil, `{"level":"info","msg":"request served %s","path":"/cart/items","status":200,"duration_ms":%d}`, token, p.rnd.IntN(100))
		default:
			return "stdout", fmt.Appendf(nil, "INFO request served path=/cart/items status=200 %s", token)
		}
	}
}

// long is a line of about size bytes: a klog record with a large value, or a long application line.
func (p *producer) long(token string, size int) (string, []byte) {
	payload := strings.Repeat("0123456789abcdef", size/16+1)[:size]
	switch p.format {
	case FormatKlogText, FormatKlogJSON:
		p.log.Info("Large object "+token, "object", klog.KRef(p.ns, "config"), "data", payload)
		return "stderr", p.take()
	default:
		return "stdout", []byte(token + " " + payload)
	}
}

// malformed is a broken line. raw reports a line to be written without a CRI header.
func (p *producer) malformed(token string) (stream string, content []byte, raw bool) {
	switch p.rnd.IntN(5) {
	case 0:
		return "", []byte("garbage without a CRI header " + token), true
	case 1:
		return "stderr", []byte("E1399 99:99:99.99999x   x broken.go:] \"unterminated " + token + " key=\"value"), false
	case 2:
		return "stdout", []byte("bad bytes \xff\xfe\xfd " + token + " \xc3"), false
	case 3:
		// A JSON record cut short, with the time the logger would have written (epoch milliseconds).
		ts := float64(time.Now().UnixMicro()) / 1000
		return "stderr", fmt.Appendf(nil, `{"ts":%.3f,"caller":"x.go:1","msg":"truncated %s","pod":{"name":`, ts, token), false
	default:
		return "stdout", []byte("\ttabs\x01and control\x1b[31m " + token + " \x7f"), false
	}
}
