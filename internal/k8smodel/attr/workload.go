// SPDX-License-Identifier: Apache-2.0

package attr

// Workload names a Pod's data is tagged with, from its owner chain (the pod_metadata
// extension), with the meaning semantic conventions give them: the workload that runs the pod
// that produced the data.
const (
	K8sDeploymentName  = "k8s.deployment.name"
	K8sReplicaSetName  = "k8s.replicaset.name"
	K8sStatefulSetName = "k8s.statefulset.name"
	K8sDaemonSetName   = "k8s.daemonset.name"
	K8sJobName         = "k8s.job.name"
	K8sCronJobName     = "k8s.cronjob.name"
)

// Label and annotation families: a configured Pod label, Pod annotation or namespace label
// copied to a resource attribute whose name is the prefix followed by the key, as contrib's
// k8s_attributes names them by default (its queries keep working). The key comes from the
// configuration, never from log content.
const (
	K8sPodLabelsPrefix       = "k8s.pod.labels."
	K8sPodAnnotationsPrefix  = "k8s.pod.annotations."
	K8sNamespaceLabelsPrefix = "k8s.namespace.labels."
)

func init() {
	workload := func(name, kind string) Entry {
		return Entry{
			Name: name, Origin: Semconv, Place: Resource, Type: "string",
			Writers: []string{"cri_log", "k8s_attributes"}, Doc: "the " + kind + " running the pod that wrote the data",
		}
	}
	register(
		workload(K8sDeploymentName, "Deployment"),
		workload(K8sReplicaSetName, "ReplicaSet"),
		workload(K8sStatefulSetName, "StatefulSet"),
		workload(K8sDaemonSetName, "DaemonSet"),
		workload(K8sJobName, "Job"),
		workload(K8sCronJobName, "CronJob"),
	)
}
