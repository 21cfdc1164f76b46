package objectref

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
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
