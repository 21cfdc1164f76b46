// SPDX-License-Identifier: Apache-2.0

// Package kubenode runs a real one-node Kubernetes cluster on this machine, on loopback, for
// end-to-end tests: the project's etcd and kube-apiserver (bin/kube-local), containerd and runc
// from the distribution's packages, and the kubelet, kube-scheduler and kube-controller-manager
// of k8s.io/kubernetes (bin/kube-node, built from ./node). It needs root.
//
// Everything lives under a scratch folder where the programs allow it (containerd's root,
// state, sockets and runc's state; the kubelet's root; the logs). What the programs put
// elsewhere whatever their configuration (the kubelet's sysctls and cgroups, its device
// plug-in socket under /var/lib/kubelet, /var/log/pods and /var/log/containers, the shims'
// sockets under /run/containerd) is recorded at Start and undone by Stop, which reports what it
// could not undo.
//
// Nothing is reachable from outside the machine, and nothing connects to an address outside
// 127.0.0.0/8: the API server and the kubelet listen on loopback; the kubelet registers the
// machine's own address as the Node's (it refuses a loopback one), which no test may use.
// Workload Pods run on the host network with imagePullPolicy: Never, with images imported
// through ImportImage; in-cluster clients need KUBERNETES_SERVICE_HOST=APIHost and
// KUBERNETES_SERVICE_PORT=APIPort, as there is no kube-proxy.
package kubenode
