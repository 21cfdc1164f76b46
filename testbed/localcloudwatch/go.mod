module github.com/otelcol-k8s/otelcol-k8s/testbed/localcloudwatch

go 1.26.0

require (
	github.com/aws/aws-sdk-go-v2 v1.47.7
	github.com/aws/aws-sdk-go-v2/credentials v1.20.15
	github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs v1.92.0
	github.com/aws/smithy-go v1.28.8
	github.com/otelcol-k8s/otelcol-k8s/internal/jsonstring v0.1.0
)

require (
	github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream v1.7.26 // indirect
	github.com/aws/aws-sdk-go-v2/internal/configsources v1.5.10 // indirect
	github.com/aws/aws-sdk-go-v2/internal/endpoints/v2 v2.8.10 // indirect
	github.com/otelcol-k8s/otelcol-k8s/internal/awsauth v0.1.0
)

replace github.com/otelcol-k8s/otelcol-k8s/internal/jsonstring => ../../internal/jsonstring

replace github.com/otelcol-k8s/otelcol-k8s/internal/awsauth => ../../internal/awsauth
