module github.com/otelcol-k8s/otelcol-k8s/testbed/localxray

go 1.26.0

require go.opentelemetry.io/collector/pdata v1.66.0

require github.com/aws/smithy-go v1.28.8 // indirect

require (
	github.com/aws/aws-sdk-go-v2 v1.47.7
	github.com/hashicorp/go-version v1.9.0 // indirect
	github.com/json-iterator/go v1.1.12 // indirect
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd // indirect
	github.com/modern-go/reflect2 v1.0.3-0.20250322232337-35a7c28c31ee // indirect
	github.com/otelcol-k8s/otelcol-k8s/internal/awsauth v0.1.0
	go.opentelemetry.io/collector/featuregate v1.66.0 // indirect
	go.uber.org/goleak v1.3.0
	go.uber.org/multierr v1.11.0 // indirect
	golang.org/x/net v0.58.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/text v0.41.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260526163538-3dc84a4a5aaa // indirect
	google.golang.org/grpc v1.83.2 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

replace github.com/otelcol-k8s/otelcol-k8s/internal/awsauth => ../../internal/awsauth
