module github.com/otelcol-k8s/otelcol-k8s/processor/klogparser

go 1.26.0
