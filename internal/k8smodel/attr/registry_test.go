// SPDX-License-Identifier: Apache-2.0

package attr

import (
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// pinned maps every semantic-convention name the registry uses to the constant of the semconv
// package the project pins: a name missing from that version does not compile.
var pinned = map[string]attribute.Key{
	K8sNamespaceName:         semconv.K8SNamespaceNameKey,
	K8sPodName:               semconv.K8SPodNameKey,
	K8sPodUID:                semconv.K8SPodUIDKey,
	K8sContainerName:         semconv.K8SContainerNameKey,
	K8sContainerRestartCount: semconv.K8SContainerRestartCountKey,
	K8sNodeName:              semconv.K8SNodeNameKey,
	K8sClusterName:           semconv.K8SClusterNameKey,
	HostName:                 semconv.HostNameKey,
	ServiceName:              semconv.ServiceNameKey,
	LogIOStream:              semconv.LogIostreamKey,
	LogFilePath:              semconv.LogFilePathKey,
	LogRecordOriginal:        semconv.LogRecordOriginalKey,
	CodeFilePath:             semconv.CodeFilePathKey,
	CodeLineNumber:           semconv.CodeLineNumberKey,
	ThreadID:                 semconv.ThreadIDKey,
	ExceptionMessage:         semconv.ExceptionMessageKey,
	ProcessPID:               semconv.ProcessPIDKey,
	HostID:                   semconv.HostIDKey,
	K8sDeploymentName:        semconv.K8SDeploymentNameKey,
	K8sReplicaSetName:        semconv.K8SReplicaSetNameKey,
	K8sStatefulSetName:       semconv.K8SStatefulSetNameKey,
	K8sDaemonSetName:         semconv.K8SDaemonSetNameKey,
	K8sJobName:               semconv.K8SJobNameKey,
	K8sCronJobName:           semconv.K8SCronJobNameKey,
}

func TestSemconvNamesExistInThePinnedVersion(t *testing.T) {
	for _, e := range All() {
		if e.Origin != Semconv {
			continue
		}
		key, ok := pinned[e.Name]
		if !ok {
			t.Errorf("%s: marked semconv, but not checked against the pinned semconv package; add it to pinned", e.Name)
			continue
		}
		if string(key) != e.Name {
			t.Errorf("%s: the pinned semconv constant is %q", e.Name, key)
		}
	}
	for name := range pinned {
		if e, ok := Lookup(name); !ok || e.Origin != Semconv {
			t.Errorf("%s: in pinned but not registered as semconv", name)
		}
	}
}

func TestReserved(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want bool
	}{
		{"pod", false},
		{"namespace", false},
		{"err", false},
		{"k8s.pod.name", true},
		{"k8s.anything", true},
		{"otelcol_k8s.log.type", true},
		{"otelcol_k8s.object.name", true},
		{"log.file.path", true},
		{"host.name", true},
		{"klog.format", false},
		{"service.name", true},
		{"cloud.region", true},
	} {
		if got := Reserved(tc.key); got != tc.want {
			t.Errorf("Reserved(%q) = %v, want %v", tc.key, got, tc.want)
		}
	}
}

func TestFamilies(t *testing.T) {
	if !RegisteredOrFamily(KlogPairPrefix + "k8s.pod.name") {
		t.Error("a renamed klog pair is in a registered family")
	}
	if RegisteredOrFamily(KlogPairPrefix) || RegisteredOrFamily("otelcol_k8s.unknown") {
		t.Error("the bare family prefix or an unknown own name is not registered")
	}
}

func TestNoOwnNameInsideASemconvNamespace(t *testing.T) {
	semconvNamespaces := []string{"k8s.", "log.", "code.", "thread.", "exception.", "error.", "host.", "container.", "cloud.", "event."}
	for _, e := range All() {
		switch e.Origin {
		case Own:
			if !strings.HasPrefix(e.Name, Prefix) {
				t.Errorf("%s: the project's own names live under %q", e.Name, Prefix)
			}
			for _, ns := range semconvNamespaces {
				if strings.HasPrefix(e.Name, ns) {
					t.Errorf("%s: own name inside the semantic-convention namespace %q", e.Name, ns)
				}
			}
		case Semconv:
			if strings.HasPrefix(e.Name, Prefix) {
				t.Errorf("%s: marked semconv but under the project prefix", e.Name)
			}
		default:
			t.Errorf("%s: no origin", e.Name)
		}
		if e.Place == 0 || e.Type == "" || len(e.Writers) == 0 || e.Doc == "" {
			t.Errorf("%s: incomplete entry %+v", e.Name, e)
		}
	}
}

// TestEveryNameHasADot keeps Reserved's fast path true: a key without a dot is neither a
// registered name nor inside a reserved namespace.
func TestEveryNameHasADot(t *testing.T) {
	for _, e := range All() {
		if !strings.Contains(e.Name, ".") {
			t.Errorf("%s has no dot", e.Name)
		}
	}
	for _, ns := range append(append([]string{}, reservedNamespaces...), families...) {
		if !strings.HasSuffix(ns, ".") {
			t.Errorf("namespace %q does not end with a dot", ns)
		}
	}
}
