// SPDX-License-Identifier: Apache-2.0

package cloudwatchgroupsexporter // import "github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter"

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/batching"
	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/encoding"
	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/naming"
	"github.com/otelcol-k8s/otelcol-k8s/exporter/cloudwatchgroupsexporter/internal/routing"
)

// Config configures the cloudwatch_groups exporter.
type Config struct {
	TimeoutConfig exporterhelper.TimeoutConfig                             `mapstructure:",squash"`
	QueueConfig   configoptional.Optional[exporterhelper.QueueBatchConfig] `mapstructure:"sending_queue"`
	// BackOffConfig drives both the retries of single PutLogEvents calls and exporterhelper's
	// retries of whole requests.
	BackOffConfig configretry.BackOffConfig `mapstructure:"retry_on_failure"`
	// DeliveryWarnAfter is how long delivery must fail without a success before it is logged
	// at warn level (and again at this interval while it lasts).
	DeliveryWarnAfter time.Duration `mapstructure:"delivery_warn_after"`

	// Region is the AWS Region; empty means the standard chain (AWS_REGION, shared config).
	Region string `mapstructure:"region"`
	// Endpoint overrides the CloudWatch Logs endpoint URL.
	Endpoint string `mapstructure:"endpoint"`
	// Profile selects a shared config profile; empty means the default chain.
	Profile string `mapstructure:"profile"`
	// RoleARN, when set, is assumed through STS with the base credentials.
	RoleARN string `mapstructure:"role_arn"`

	// GroupBy is log_type, namespace_name or namespace_uid.
	GroupBy GroupBy `mapstructure:"group_by"`
	// GroupByOptional lists attribute keys whose first present, valid value names the group.
	GroupByOptional []string `mapstructure:"group_by_optional"`
	// GroupPrefix is put before every group name, joined with GroupSeparator.
	GroupPrefix    string `mapstructure:"group_prefix"`
	GroupSeparator string `mapstructure:"group_separator"`
	// LogType configures how records are classified.
	LogType LogTypeConfig `mapstructure:"log_type"`
	// StreamNameTemplate overrides the "<host>.<routing key>" stream name.
	StreamNameTemplate string `mapstructure:"stream_name_template"`
	// RecordAttributes lists the attribute keys routing may read from a log record when its
	// resource lacks them; every other key is read from the resource only, so log content
	// never chooses a destination.
	RecordAttributes []string `mapstructure:"record_attributes"`
	// Hostname overrides the host part of stream names when resources carry no host.name or
	// k8s.node.name; empty means the host name of the process.
	Hostname string `mapstructure:"hostname"`

	// RetentionDays is applied to every group; 0 leaves retention alone.
	RetentionDays int32 `mapstructure:"retention_days"`
	// Tags are applied to every group.
	Tags map[string]string `mapstructure:"tags"`
	// KMSKeyID is the KMS key ARN associated with every group.
	KMSKeyID string `mapstructure:"kms_key_id"`
	// LogGroupClass is used when creating groups.
	LogGroupClass string `mapstructure:"log_group_class"`
	// ApplySettingsToExistingGroups also brings groups this process did not create in line
	// with the settings, in the background. Turn it on in one place (the cluster Deployment),
	// not on every node.
	ApplySettingsToExistingGroups bool `mapstructure:"apply_settings_to_existing_groups"`

	// MessageFormat is json (default) or raw.
	MessageFormat MessageFormat `mapstructure:"message_format"`
	// MaxEventBytes is the largest event message; longer ones are truncated or split.
	MaxEventBytes int `mapstructure:"max_event_bytes"`
	// Oversize is truncate (default) or split.
	Oversize Oversize `mapstructure:"oversize"`

	// MaxConcurrency bounds parallel PutLogEvents calls per request.
	MaxConcurrency int `mapstructure:"max_concurrency"`
	// CreateLogGroupRate and CreateLogStreamRate bound creation calls per second.
	CreateLogGroupRate  float64 `mapstructure:"create_log_group_rate"`
	CreateLogStreamRate float64 `mapstructure:"create_log_stream_rate"`
}

var _ component.Config = (*Config)(nil)

// GroupBy is what names a record's log group: log_type, namespace_name or namespace_uid.
type GroupBy string

// Group-by modes.
const (
	GroupByLogType       = GroupBy(routing.ByLogType)
	GroupByNamespaceName = GroupBy(routing.ByNamespaceName)
	GroupByNamespaceUID  = GroupBy(routing.ByNamespaceUID)
)

// UnmarshalText accepts only the known modes, so a typo fails when the configuration is read.
func (g *GroupBy) UnmarshalText(text []byte) error {
	switch v := GroupBy(text); v {
	case GroupByLogType, GroupByNamespaceName, GroupByNamespaceUID:
		*g = v
		return nil
	}
	return fmt.Errorf("%q: must be log_type, namespace_name or namespace_uid", text)
}

// MessageFormat is how a record becomes an event message: json or raw.
type MessageFormat string

// Message formats.
const (
	MessageFormatJSON = MessageFormat(encoding.JSON)
	MessageFormatRaw  = MessageFormat(encoding.Raw)
)

// UnmarshalText accepts only the known formats.
func (f *MessageFormat) UnmarshalText(text []byte) error {
	switch v := MessageFormat(text); v {
	case MessageFormatJSON, MessageFormatRaw:
		*f = v
		return nil
	}
	return fmt.Errorf("%q: must be json or raw", text)
}

// Oversize is what happens to an event message over max_event_bytes: truncate or split.
type Oversize string

// Oversize modes.
const (
	OversizeTruncate Oversize = "truncate"
	OversizeSplit    Oversize = "split"
)

// UnmarshalText accepts only the known modes.
func (o *Oversize) UnmarshalText(text []byte) error {
	switch v := Oversize(text); v {
	case OversizeTruncate, OversizeSplit:
		*o = v
		return nil
	}
	return fmt.Errorf("%q: must be truncate or split", text)
}

// LogTypeConfig configures log type classification.
type LogTypeConfig struct {
	// Attribute is where the type is read from (when set upstream) and recorded.
	Attribute string `mapstructure:"attribute"`
	// InfrastructureNamespaces are glob patterns of infrastructure namespaces.
	InfrastructureNamespaces []string `mapstructure:"infrastructure_namespaces"`
	// JournalMatchers identify node journal records (infrastructure).
	JournalMatchers []routing.Matcher `mapstructure:"journal_matchers"`
	// AuditMatchers identify audit records.
	AuditMatchers []routing.Matcher `mapstructure:"audit_matchers"`
}

// retentionDays are the values PutRetentionPolicy accepts.
var retentionDays = []int32{1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}

var logGroupClasses = []string{"STANDARD", "INFREQUENT_ACCESS", "DELIVERY"}

// Validate checks the configuration.
func (c *Config) Validate() error {
	var errs []error
	switch c.GroupBy {
	case GroupByLogType, GroupByNamespaceName, GroupByNamespaceUID:
	default:
		errs = append(errs, fmt.Errorf("group_by %q: must be log_type, namespace_name or namespace_uid", c.GroupBy))
	}
	for i, k := range c.GroupByOptional {
		if k == "" {
			errs = append(errs, fmt.Errorf("group_by_optional[%d] is empty", i))
		}
	}
	for i, k := range c.RecordAttributes {
		if k == "" {
			errs = append(errs, fmt.Errorf("record_attributes[%d] is empty", i))
		}
	}
	if c.GroupPrefix != "" {
		if !naming.ValidGroup(c.GroupPrefix + c.GroupSeparator + "x") {
			errs = append(errs, fmt.Errorf("group_prefix %q with group_separator %q does not make a valid log group name", c.GroupPrefix, c.GroupSeparator))
		}
	}
	for _, m := range slices.Concat(c.LogType.JournalMatchers, c.LogType.AuditMatchers) {
		if m.Key == "" || m.Pattern == "" {
			errs = append(errs, errors.New("log_type matchers need both key and pattern"))
			break
		}
	}
	if _, err := routing.New(c.routingConfig()); err != nil {
		errs = append(errs, err)
	}
	if c.RetentionDays != 0 && !slices.Contains(retentionDays, c.RetentionDays) {
		errs = append(errs, fmt.Errorf("retention_days %d: must be 0 (leave unchanged) or one of %v", c.RetentionDays, retentionDays))
	}
	if c.LogGroupClass != "" && !slices.Contains(logGroupClasses, c.LogGroupClass) {
		errs = append(errs, fmt.Errorf("log_group_class %q: must be one of %s", c.LogGroupClass, strings.Join(logGroupClasses, ", ")))
	}
	if len(c.Tags) > 50 {
		errs = append(errs, fmt.Errorf("tags: at most 50, got %d", len(c.Tags)))
	}
	for k, v := range c.Tags {
		if k == "" || len(k) > 128 || len(v) > 256 || strings.HasPrefix(strings.ToLower(k), "aws:") {
			errs = append(errs, fmt.Errorf("tag %q: keys must be 1-128 characters not starting with aws:, values at most 256", k))
		}
	}
	switch c.MessageFormat {
	case MessageFormatJSON, MessageFormatRaw:
	default:
		errs = append(errs, fmt.Errorf("message_format %q: must be json or raw", c.MessageFormat))
	}
	if c.MaxEventBytes < 64 || c.MaxEventBytes > batching.MaxEventBytes {
		errs = append(errs, fmt.Errorf("max_event_bytes %d: must be between 64 and %d", c.MaxEventBytes, batching.MaxEventBytes))
	}
	if c.Oversize != OversizeTruncate && c.Oversize != OversizeSplit {
		errs = append(errs, fmt.Errorf("oversize %q: must be truncate or split", c.Oversize))
	}
	if c.DeliveryWarnAfter <= 0 {
		errs = append(errs, fmt.Errorf("delivery_warn_after %v: must be positive", c.DeliveryWarnAfter))
	}
	if c.MaxConcurrency < 1 {
		errs = append(errs, errors.New("max_concurrency must be at least 1"))
	}
	if c.CreateLogGroupRate <= 0 || c.CreateLogStreamRate <= 0 {
		errs = append(errs, errors.New("create_log_group_rate and create_log_stream_rate must be positive"))
	}
	if c.Endpoint != "" {
		if u, err := url.Parse(c.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("endpoint %q: must be an http or https URL with a host", c.Endpoint))
		}
	}
	if c.LogGroupClass == "DELIVERY" && c.RetentionDays != 0 {
		errs = append(errs, errors.New("retention_days: a DELIVERY class group has a fixed retention; leave retention_days at 0"))
	}
	if c.RoleARN != "" && !strings.HasPrefix(c.RoleARN, "arn:") {
		errs = append(errs, fmt.Errorf("role_arn %q is not an ARN", c.RoleARN))
	}
	return errors.Join(errs...)
}

func (c *Config) routingConfig() routing.Config {
	return routing.Config{
		GroupBy:                  routing.GroupBy(c.GroupBy),
		GroupByOptional:          c.GroupByOptional,
		GroupPrefix:              c.GroupPrefix,
		GroupSeparator:           c.GroupSeparator,
		TypeAttribute:            c.LogType.Attribute,
		InfrastructureNamespaces: c.LogType.InfrastructureNamespaces,
		JournalMatchers:          c.LogType.JournalMatchers,
		AuditMatchers:            c.LogType.AuditMatchers,
		StreamTemplate:           c.StreamNameTemplate,
		Hostname:                 c.Hostname,
		RecordAttributes:         c.RecordAttributes,
	}
}
