// SPDX-License-Identifier: Apache-2.0

package realnode

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestWorkloadAttributesFromFirstLine: the Pods of a Deployment write all their lines within
// half a second of starting, before any watch could have told the agent about them; every
// line, the first included, arrives with the Pod's identity and its Deployment's name in the
// resource (the agent holds a new file until the Pod's metadata is known, cri_log
// metadata_wait).
func TestWorkloadAttributesFromFirstLine(t *testing.T) {
	e := need(t)
	diagnoseOnFailure(t, e)
	ensureWorkNamespace(t, e)
	ctx := context.Background()
	cs := e.node.Client
	replicas := int32(2)
	labels := map[string]string{"app": "firstline"}
	tmpl := loggenPod("firstline", 400, lineSize, 100)
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "firstline", Namespace: workNamespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: tmpl.Spec},
		},
	}
	// Each Pod's lines carry its name (in the node's network the host name is the node's).
	c := &dep.Spec.Template.Spec.Containers[0]
	c.Env = []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
	c.Args = []string{"-id", "$(POD_NAME)", "-rate", "400", "-size", "250", "-count", "100"}
	_, err := cs.AppsV1().Deployments(workNamespace).Create(ctx, dep, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.AppsV1().Deployments(workNamespace).Delete(ctx, dep.Name, metav1.DeleteOptions{}) })

	var pods []corev1.Pod
	require.Eventually(t, func() bool {
		list, err := cs.CoreV1().Pods(workNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app=firstline"})
		if err != nil || len(list.Items) != int(replicas) {
			return false
		}
		pods = list.Items
		return true
	}, time.Minute, 200*time.Millisecond)
	var ws []loggen
	ids := map[string]bool{}
	for _, p := range pods {
		ws = append(ws, loggen{name: p.Name, streams: []string{"stdout", "stderr"}, lines: 100})
		ids[p.Name] = true
	}
	a, _ := waitAccount(t, e, ws, 2*time.Minute)
	require.Zero(t, a.missing, "%s", a)

	checked, without := 0, 0
	for _, ev := range mustStored(t, e) {
		m := lineRE.FindStringSubmatch(ev.Message)
		if m == nil || !ids[m[1]] {
			continue
		}
		var rec struct {
			Resource map[string]any `json:"resource"`
		}
		require.NoError(t, json.Unmarshal([]byte(ev.Message), &rec), ev.Message)
		checked++
		r := rec.Resource
		if r["k8s.deployment.name"] != "firstline" || r["k8s.pod.name"] != m[1] || r["k8s.namespace.name"] != workNamespace || r["k8s.node.name"] == nil {
			without++
			if without <= 3 {
				t.Errorf("line %s %s %s arrived with resource %v", m[1], m[2], m[3], r)
			}
		}
	}
	t.Logf("%d lines of 2 Pods written within half a second of their start: %d without their workload attributes", checked, without)
	assert.Equal(t, a.written, checked)
	assert.Zero(t, without)
}
