// SPDX-License-Identifier: Apache-2.0

package objectrefprocessor

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKeySet(t *testing.T) {
	long := strings.Repeat("x", 70)
	var s keySet
	for i, k := range []string{"pod", "k8s.pod.uid", "replicaSet", long, ""} {
		s.add(k, i)
	}
	for i, k := range []string{"pod", "k8s.pod.uid", "replicaSet", long} {
		v, ok := s.get(k)
		assert.True(t, ok, k)
		assert.Equal(t, i, v, k)
	}
	for _, k := range []string{"", "Pod", "pot", "klog.format", "k8s.pod.uix", "replicaSeT", long + "x", long[1:], "p"} {
		assert.False(t, s.has(k), k)
	}
	var empty keySet
	assert.False(t, empty.has("pod"))
	assert.False(t, empty.has(long))
}

// TestFilterPassesNoCommonKey checks that the keys klog_parser writes on every record, and
// those of the apiserver access log (most of a control plane's lines), are turned away by the
// filter of the default tables without being hashed.
func TestFilterPassesNoCommonKey(t *testing.T) {
	tb, err := buildTable(&Config{Match: MatchConfig{Klog: true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{
		"thread.id", "code.file.path", "code.line.number", "exception.message", "otelcol_k8s.klog.verbosity",
		"otelcol_k8s.klog.format", "otelcol_k8s.klog.parse_error", "otelcol_k8s.klog.unparsed", "log.iostream", "log.file.path",
		"verb", "URI", "latency", "userAgent", "audit-ID", "srcIP", "resp",
	} {
		assert.False(t, tb.attrRoles.mayHave(k), k)
	}
	for _, k := range []string{"pod", "podUID", "namespace", "kind", "otelcol_k8s.object.name", "otelcol_k8s.object.refs", "related"} {
		assert.True(t, tb.attrRoles.mayHave(k), k)
	}
}

// TestBuildTableRefusesAMalformedAPIVersion: a configured kind's api_version is split by the
// object model's one parser; one with two slashes is an error naming the key.
func TestBuildTableRefusesAMalformedAPIVersion(t *testing.T) {
	_, err := buildTable(&Config{Kinds: []KindConfig{{Kind: "Certificate", APIVersion: "cert-manager.io/v1/x"}}})
	require.ErrorContains(t, err, `kinds[0]: api_version "cert-manager.io/v1/x" is not group/version`)
	tb, err := buildTable(&Config{Kinds: []KindConfig{{Kind: "Certificate", APIVersion: "cert-manager.io/v1", Namespaced: true}}})
	require.NoError(t, err)
	k := tb.kinds.Lookup("cert-manager.io/v1", "Certificate")
	require.NotNil(t, k)
	assert.Equal(t, "cert-manager.io", k.Group)
	assert.Equal(t, "v1", k.Version)
}
