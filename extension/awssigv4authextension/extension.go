// SPDX-License-Identifier: Apache-2.0

package awssigv4authextension

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/extensionauth"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otelcol-k8s/otelcol-k8s/extension/awssigv4authextension/internal/metadata"
	"github.com/otelcol-k8s/otelcol-k8s/internal/awsauth"
)

// defaultSessionName names the assumed-role session when assume_role.session_name is empty.
const defaultSessionName = "otelcol-k8s-sigv4"

// authenticator is the extension: Start resolves the AWS configuration, RoundTripper wraps an
// exporter's transport with a signing one.
type authenticator struct {
	cfg      *Config
	tel      *metadata.TelemetryBuilder
	loadOpts awsauth.Options

	region string
	creds  aws.CredentialsProvider
	signer *v4.Signer
	now    func() time.Time
}

var (
	_ component.Component      = (*authenticator)(nil)
	_ extensionauth.HTTPClient = (*authenticator)(nil)
)

func newAuthenticator(cfg *Config, set component.TelemetrySettings) (*authenticator, error) {
	tel, err := metadata.NewTelemetryBuilder(set)
	if err != nil {
		return nil, err
	}
	session := cfg.AssumeRole.SessionName
	if session == "" {
		session = defaultSessionName
	}
	return &authenticator{
		cfg: cfg,
		tel: tel,
		loadOpts: awsauth.Options{
			Region:      cfg.Region,
			RoleARN:     cfg.AssumeRole.ARN,
			SessionName: session,
			STSRegion:   cfg.AssumeRole.STSRegion,
		},
		signer: v4.NewSigner(),
		now:    time.Now,
	}, nil
}

// Start loads the AWS configuration (Region and the credentials chain); credentials
// themselves are fetched, and cached, when the first request is signed.
func (a *authenticator) Start(ctx context.Context, _ component.Host) error {
	cfg, err := awsauth.Load(ctx, a.loadOpts)
	if err != nil {
		return fmt.Errorf("aws_sigv4_auth: %w", err)
	}
	if cfg.Credentials == nil {
		return errors.New("aws_sigv4_auth: the AWS configuration has no credentials provider")
	}
	a.region = cfg.Region
	a.creds = cfg.Credentials
	return nil
}

// Shutdown releases nothing: the credentials cache holds no goroutine.
func (a *authenticator) Shutdown(context.Context) error {
	a.tel.Shutdown()
	return nil
}

// RoundTripper returns base wrapped so that every request is signed just before it is sent.
func (a *authenticator) RoundTripper(base http.RoundTripper) (http.RoundTripper, error) {
	if a.creds == nil {
		return nil, errors.New("aws_sigv4_auth: RoundTripper called before Start")
	}
	if base == nil {
		base = http.DefaultTransport
	}
	return &signingTransport{a: a, base: base}, nil
}

// signingTransport signs each request over the exact bytes it sends. The collector's HTTP
// client puts the authenticator innermost, after compression, so a gzip body is hashed as
// compressed: the payload hash covers what goes on the wire.
type signingTransport struct {
	a    *authenticator
	base http.RoundTripper
}

func (t *signingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	body, err := drain(req)
	if err != nil {
		t.a.fail(ctx, "body")
		return nil, fmt.Errorf("aws_sigv4_auth: read the request body: %w", err)
	}
	creds, err := t.a.creds.Retrieve(ctx)
	if err != nil {
		// Marked by awsauth as a credential error: the exporter sees a transport error and
		// retries; the provider is asked again next time.
		t.a.fail(ctx, "credentials")
		return nil, fmt.Errorf("aws_sigv4_auth: %w", err)
	}
	out := req.Clone(ctx)
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	out.ContentLength = int64(len(body))
	if len(body) == 0 {
		out.Body = http.NoBody
	}
	// Headers a previous attempt may have left on a reused request are signed afresh.
	out.Header.Del("Authorization")
	out.Header.Del("X-Amz-Date")
	out.Header.Del("X-Amz-Security-Token")
	sum := sha256.Sum256(body)
	if err := t.a.signer.SignHTTP(ctx, creds, out, hex.EncodeToString(sum[:]), t.a.cfg.Service, t.a.region, t.a.now().UTC()); err != nil {
		t.a.fail(ctx, "sign")
		return nil, fmt.Errorf("aws_sigv4_auth: sign: %w", err)
	}
	t.a.tel.ExtensionAwsSigv4AuthRequestsSigned.Add(ctx, 1)
	return t.base.RoundTrip(out)
}

func (a *authenticator) fail(ctx context.Context, reason string) {
	a.tel.ExtensionAwsSigv4AuthSigningFailures.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", reason)))
}

// drain reads and closes the request body (a RoundTripper must close it, even on error).
func drain(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	b, err := io.ReadAll(req.Body)
	if cerr := req.Body.Close(); err == nil {
		err = cerr
	}
	return b, err
}
