module github.com/otelcol-k8s/otelcol-k8s/testbed/sigv4check

go 1.26.0

require github.com/aws/aws-sdk-go-v2 v1.47.7

require github.com/aws/smithy-go v1.28.8 // indirect
