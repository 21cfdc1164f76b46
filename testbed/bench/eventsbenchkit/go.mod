module github.com/otelcol-k8s/otelcol-k8s/testbed/bench/eventsbenchkit

go 1.26.0
