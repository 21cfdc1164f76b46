// SPDX-License-Identifier: Apache-2.0

package awssigv4authextension

import (
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/collector/component"
)

// Config configures the aws_sigv4_auth extension.
type Config struct {
	// Region is the AWS Region in the signature's scope; empty means the standard chain
	// (AWS_REGION, the shared config file).
	Region string `mapstructure:"region"`
	// Service is the signing name of the service the requests go to: "xray" for the X-Ray
	// OTLP endpoint, "logs" for the CloudWatch Logs OTLP endpoint.
	Service string `mapstructure:"service"`
	// AssumeRole, when its ARN is set, signs with the credentials of that role, assumed
	// through STS with the base credentials of the chain.
	AssumeRole AssumeRole `mapstructure:"assume_role"`
}

// AssumeRole names a role to assume.
type AssumeRole struct {
	// ARN is the role's ARN.
	ARN string `mapstructure:"arn"`
	// SessionName names the assumed-role session (default otelcol-k8s-sigv4).
	SessionName string `mapstructure:"session_name"`
	// STSRegion is the Region of the STS endpoint; empty means Region.
	STSRegion string `mapstructure:"sts_region"`
}

var _ component.Config = (*Config)(nil)

// Validate checks the configuration.
func (c *Config) Validate() error {
	var errs []error
	if c.Service == "" || strings.ContainsAny(c.Service, " /\t\n") {
		errs = append(errs, fmt.Errorf("service %q: must be a signing name such as xray", c.Service))
	}
	if strings.ContainsAny(c.Region, " /\t\n") {
		errs = append(errs, fmt.Errorf("region %q: not a Region name", c.Region))
	}
	ar := c.AssumeRole
	if ar.ARN == "" {
		if ar.SessionName != "" || ar.STSRegion != "" {
			errs = append(errs, errors.New("assume_role: session_name and sts_region need arn"))
		}
	} else if parts := strings.SplitN(ar.ARN, ":", 6); len(parts) != 6 || parts[0] != "arn" || parts[2] != "iam" || !strings.HasPrefix(parts[5], "role/") {
		errs = append(errs, fmt.Errorf("assume_role.arn %q: not an IAM role ARN (arn:<partition>:iam::<account>:role/<name>)", ar.ARN))
	}
	if len(ar.SessionName) > 64 {
		errs = append(errs, fmt.Errorf("assume_role.session_name: %d characters, at most 64", len(ar.SessionName)))
	}
	if strings.ContainsAny(ar.STSRegion, " /\t\n") {
		errs = append(errs, fmt.Errorf("assume_role.sts_region %q: not a Region name", ar.STSRegion))
	}
	return errors.Join(errs...)
}
