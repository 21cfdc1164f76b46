module github.com/otelcol-k8s/otelcol-k8s/receiver/crilogreceiver

go 1.26.0
