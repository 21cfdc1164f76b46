module github.com/otelcol-k8s/otelcol-k8s/testbed/kubecluster

go 1.26.0
