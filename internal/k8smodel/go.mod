module github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel

go 1.26.0

require go.opentelemetry.io/otel v1.46.0

require github.com/cespare/xxhash/v2 v2.3.0 // indirect
