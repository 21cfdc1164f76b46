module github.com/otelcol-k8s/otelcol-k8s

go 1.26.0
