module github.com/otelcol-k8s/otelcol-k8s/receiver/journalreceiver

go 1.26.0

replace github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel => ../../internal/k8smodel

require (
	github.com/klauspost/compress v1.19.2
	github.com/pierrec/lz4/v4 v4.1.33
	github.com/stretchr/testify v1.12.1
	github.com/ulikunitz/xz v0.5.17
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
