package cloudwatchgroups // import "github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroups"

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroups/internal/bufpool"
	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroups/internal/encoding"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroups/internal/sender"
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
	return cloudwatchlogs.NewFromConfig(awsCfg, func(o *cloudwatchlogs.Options) {
		o.Retryer = aws.NopRetryer{}
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		o.Protocol = fastPutLogEvents{ClientProtocol: o.Protocol}
		o.APIOptions = append(o.APIOptions, addRecycleBodies)
	}), nil
}

// recycleBodies is the first step of every call: it gives the serializer a place to note
// the pooled body buffers it wrote, and returns them to the pool once the call has succeeded.
// Only then is it certain that the transport read the whole body and holds none of it (a
// failed call may leave the transport writing it after the response); a failed call's
// buffers are left to the garbage collector.
var recycleBodies = middleware.InitializeMiddlewareFunc("RecyclePutLogEventsBodies",
	func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		bodies := &pooledBodies{}
		out, md, err := next.HandleInitialize(context.WithValue(ctx, pooledBodiesKey{}, bodies), in)
		if err == nil {
			for _, b := range bodies.bufs {
				bufpool.Put(b)
			}
		}
		return out, md, err
	})

func addRecycleBodies(stack *middleware.Stack) error {
	return stack.Initialize.Add(recycleBodies, middleware.Before)
}

// pooledBodies are the body buffers of one call (one per attempt the SDK serializes).
type pooledBodies struct{ bufs [][]byte }

type pooledBodiesKey struct{}

// fastPutLogEvents writes PutLogEvents bodies with encoding.AppendPutLogEventsBody (one
// pre-sized buffer, no reflection over the schema) and leaves every other operation, and
// every response, to the SDK's awsJson1_1 protocol. The headers are the protocol's. The
// events' messages are already escaped (batching.Event), so the SDK's own serializer, which
// would escape them again, never writes a PutLogEvents body of this client.
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
	var buf []byte
	if bodies, ok := ctx.Value(pooledBodiesKey{}).(*pooledBodies); ok {
		buf = bufpool.Get(encoding.PutLogEventsBodySize(group, stream, put.LogEvents))[:0]
		bodies.bufs = append(bodies.bufs, buf)
	}
	body := encoding.AppendPutLogEventsBody(buf, group, stream, put.LogEvents)
	sreq, err := req.SetStream(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("set stream: %w", err)
	}
	*req = *sreq
	return nil
}
