// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter // import "github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter"

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/encoding"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/sender"
	"github.com/otelcol-k8s/otelcol-k8s/internal/awsauth"
)

// callTimeout bounds one HTTP call to CloudWatch Logs.
const callTimeout = 60 * time.Second

// newCloudWatchClient builds a CloudWatch Logs client from the standard AWS credential chain
// (environment, shared config and profile, web identity / IRSA, ECS and EC2 roles), optionally
// assuming RoleARN (internal/awsauth). Only this client's own retries are off (the sender
// retries and counts them); STS and IMDS keep the SDK's retries, and a credentials failure is
// marked so the sender retries it.
func newCloudWatchClient(ctx context.Context, cfg *Config) (sender.API, error) {
	awsCfg, err := awsauth.Load(ctx, awsauth.Options{
		Region:      cfg.Region,
		Profile:     cfg.Profile,
		RoleARN:     cfg.RoleARN,
		SessionName: "otelcol-k8s-cloudwatch-groups",
		HTTPClient:  awshttp.NewBuildableClient().WithTimeout(callTimeout),
	})
	if err != nil {
		return nil, err
	}
	return cloudwatchlogs.NewFromConfig(awsCfg, clientOptions(cfg.Endpoint)), nil
}

// clientOptions are this exporter's changes to the SDK's client: no retries of its own, the
// endpoint when set, and PutLogEvents bodies written by fastPutLogEvents.
func clientOptions(endpoint string) func(*cloudwatchlogs.Options) {
	return func(o *cloudwatchlogs.Options) {
		o.Retryer = aws.NopRetryer{}
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
		o.Protocol = fastPutLogEvents{ClientProtocol: o.Protocol}
	}
}

// fastPutLogEvents writes PutLogEvents bodies as encoding.PutLogEventsBody streams (written
// as they are read, with no body buffer and no reflection over the schema) and leaves every
// other operation, and every response, to the SDK's awsJson1_1 protocol. The headers are the
// protocol's. The events' messages are already escaped (batching.Event), so the SDK's own
// serializer, which would escape them again, never writes a PutLogEvents body of this client.
type fastPutLogEvents struct {
	smithyhttp.ClientProtocol
}

func (p fastPutLogEvents) SerializeRequest(ctx context.Context, schema *smithy.OperationSchema, in smithy.Serializable, req *smithyhttp.Request) error {
	put, ok := in.(*cloudwatchlogs.PutLogEventsInput)
	if !ok {
		return p.ClientProtocol.SerializeRequest(ctx, schema, in, req)
	}
	if put.Entity != nil || put.SequenceToken != nil {
		return errors.New("cloudwatch_groups: PutLogEvents with an entity or a sequence token is not written by this client")
	}
	req.Method = http.MethodPost
	if req.URL.Path == "" {
		req.URL.Path = "/"
	}
	req.Header.Set("X-Amz-Target", "Logs_20140328.PutLogEvents")
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	group, stream := aws.ToString(put.LogGroupName), aws.ToString(put.LogStreamName)
	// The body reads the messages while the call runs, and no longer: once the HTTP client
	// returns, the SDK closes the transport's hold on it (TestBodyNotReadAfterTheCallReturns),
	// so the pooled buffers the messages live in can be reused after the call.
	sreq, err := req.SetStream(encoding.NewPutLogEventsBody(group, stream, put.LogEvents))
	if err != nil {
		return fmt.Errorf("set stream: %w", err)
	}
	*req = *sreq
	return nil
}
