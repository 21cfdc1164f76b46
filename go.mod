module github.com/otelcol-k8s/otelcol-k8s

go 1.26.0

require (
	go.yaml.in/yaml/v3 v3.0.5
	golang.org/x/mod v0.40.0
)
