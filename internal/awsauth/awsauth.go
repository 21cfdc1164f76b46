// SPDX-License-Identifier: Apache-2.0

// Package awsauth loads AWS configuration and credentials for the project's AWS components
// (the CloudWatch Logs exporter and the aws_sigv4_auth extension), in one place.
//
// Credential clients (STS for web identity and role_arn, IMDS, the container endpoint) keep
// the SDK's standard retries whatever a component does with its own client's retries, and a
// failure to get credentials is marked (IsCredentialError) so a caller can treat it as
// transient: the call never reached the service, and the provider is asked again next time.
package awsauth

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

// Options selects where configuration and credentials come from.
type Options struct {
	// Region is the AWS Region; empty means the standard chain (AWS_REGION, shared config).
	Region string
	// Profile selects a shared config profile; empty means the default chain.
	Profile string
	// RoleARN, when set, is assumed through STS with the base credentials.
	RoleARN string
	// SessionName names the assumed-role session.
	SessionName string
	// STSRegion is the Region of the STS endpoint used to assume RoleARN; empty means Region.
	STSRegion string
	// HTTPClient, when set, is used by every client built from the configuration.
	HTTPClient aws.HTTPClient
}

// Load returns the AWS configuration from the standard chain (environment, shared config and
// profile, web identity / IRSA, EKS Pod Identity, ECS and EC2 roles), optionally assuming
// RoleARN. Its Credentials mark every failure with CredentialError. A component that turns off
// its own client's retries must do so on that client only (its Options.Retryer), never here.
func Load(ctx context.Context, o Options) (aws.Config, error) {
	var opts []func(*config.LoadOptions) error
	if o.HTTPClient != nil {
		opts = append(opts, config.WithHTTPClient(o.HTTPClient))
	}
	if o.Region != "" {
		opts = append(opts, config.WithRegion(o.Region))
	}
	if o.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(o.Profile))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		return aws.Config{}, errors.New("no AWS region: set region or AWS_REGION")
	}
	if o.RoleARN != "" {
		stsClient := sts.NewFromConfig(cfg, func(so *sts.Options) {
			if o.STSRegion != "" {
				so.Region = o.STSRegion
			}
		})
		provider := stscreds.NewAssumeRoleProvider(stsClient, o.RoleARN, func(ao *stscreds.AssumeRoleOptions) {
			if o.SessionName != "" {
				ao.RoleSessionName = o.SessionName
			}
		})
		cfg.Credentials = aws.NewCredentialsCache(provider)
	}
	if cfg.Credentials != nil {
		cfg.Credentials = marking{cfg.Credentials}
	}
	return cfg, nil
}

// marking wraps a credentials provider and marks its failures.
type marking struct{ aws.CredentialsProvider }

func (m marking) Retrieve(ctx context.Context) (aws.Credentials, error) {
	c, err := m.CredentialsProvider.Retrieve(ctx)
	if err != nil {
		return c, &CredentialError{Err: err}
	}
	return c, nil
}

// CredentialError is a failure to get credentials.
type CredentialError struct{ Err error }

func (e *CredentialError) Error() string { return "get AWS credentials: " + e.Err.Error() }
func (e *CredentialError) Unwrap() error { return e.Err }

// CredentialError reports true; it lets callers recognize the error without importing this
// package.
func (e *CredentialError) CredentialError() bool { return true }

// IsCredentialError reports whether err comes from getting credentials.
func IsCredentialError(err error) bool {
	var ce *CredentialError
	return errors.As(err, &ce)
}
