module github.com/otelcol-k8s/otelcol-k8s/internal/jsonstring

go 1.26.0
