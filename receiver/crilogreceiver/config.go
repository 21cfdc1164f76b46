// SPDX-License-Identifier: Apache-2.0

package crilogreceiver

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"time"

	"go.opentelemetry.io/collector/component"
)

// StartAt is where files present at the very first start are read from.
type StartAt string

// Start positions for files present at first start.
const (
	StartAtEnd       StartAt = "end"
	StartAtBeginning StartAt = "beginning"
)

// UnmarshalText accepts only the known start positions, so a typo fails when the
// configuration is read.
func (s *StartAt) UnmarshalText(text []byte) error {
	switch v := StartAt(text); v {
	case StartAtEnd, StartAtBeginning:
		*s = v
		return nil
	}
	return fmt.Errorf("%q is neither %q nor %q", text, StartAtEnd, StartAtBeginning)
}

// Preset is a built-in multi-line rule.
type Preset string

// PresetKlog is the built-in multi-line preset for klog text output.
const PresetKlog Preset = "klog"

// UnmarshalText accepts only the known presets; empty means none.
func (p *Preset) UnmarshalText(text []byte) error {
	switch v := Preset(text); v {
	case "", PresetKlog, PresetStacktraces, PresetAuto:
		*p = v
		return nil
	}
	return fmt.Errorf("unknown preset %q (known: %s, %s, %s)", text, PresetKlog, PresetStacktraces, PresetAuto)
}

// PresetStacktraces joins applications' stack traces (Java, Python, Go, Node.js, Ruby) into
// the record they belong to; PresetAuto does that and what PresetKlog does.
const (
	PresetStacktraces Preset = "stacktraces"
	PresetAuto        Preset = "auto"
)

// Config is the cri_log receiver configuration.
type Config struct {
	// Include lists glob patterns of log files to read.
	Include []string `mapstructure:"include"`
	// Exclude lists glob patterns of files to skip.
	Exclude []string `mapstructure:"exclude"`
	// StartAt is where files present at the very first start are read from: end or beginning.
	// Files found later, and all files after a restart with storage, are read from their start
	// or their checkpoint.
	StartAt StartAt `mapstructure:"start_at"`
	// PollInterval is how often open files are checked for new data when idle.
	PollInterval time.Duration `mapstructure:"poll_interval"`
	// DiscoveryInterval is how often the include patterns are expanded (directory events
	// trigger discovery immediately in between).
	DiscoveryInterval time.Duration `mapstructure:"discovery_interval"`
	// DrainGrace is how long a rotated or deleted file must stay at its end, unchanged, before
	// it is closed.
	DrainGrace time.Duration `mapstructure:"drain_grace"`
	// CheckpointInterval is the least time between two checkpoint writes while files are busy;
	// an idle loop saves at once. It bounds what a kill -9 repeats (see README).
	CheckpointInterval time.Duration `mapstructure:"checkpoint_interval"`
	// MaxConcurrentFiles bounds the number of open files.
	MaxConcurrentFiles int `mapstructure:"max_concurrent_files"`
	// MaxBytesPerPoll bounds the bytes read from one file per turn, for fairness.
	MaxBytesPerPoll int `mapstructure:"max_bytes_per_poll"`
	// MaxLogSize bounds an entry after joining; longer entries are truncated and flagged.
	MaxLogSize int `mapstructure:"max_log_size"`
	// FlushTimeout is how long an unfinished partial entry waits for its last piece.
	FlushTimeout time.Duration `mapstructure:"flush_timeout"`
	// FingerprintSize is the number of leading bytes that identify a file with its inode.
	FingerprintSize int `mapstructure:"fingerprint_size"`
	// IncludeFilePath adds the log.file.path attribute to every record.
	IncludeFilePath bool `mapstructure:"include_file_path"`
	// Multiline configures optional multi-line recombination.
	Multiline MultilineConfig `mapstructure:"multiline"`
	// Storage is the storage extension that keeps checkpoints across restarts.
	Storage *component.ID `mapstructure:"storage"`
	// RetryOnFailure configures the backoff when the next consumer refuses a batch.
	RetryOnFailure RetryConfig `mapstructure:"retry_on_failure"`
	// Namespaces selects the namespaces whose containers' files are read, by the namespace in
	// the file's path.
	Namespaces NamespaceFilter `mapstructure:"namespaces"`
	// PodMetadata is the pod_metadata extension (any extension serving the podmeta contract)
	// the resource attributes of Extract and the Pods' opt-out come from; unset: neither.
	PodMetadata *component.ID `mapstructure:"pod_metadata"`
	// Extract selects the resource attributes taken from the Pod's metadata, in the shape of
	// contrib's k8s_attributes.
	Extract ExtractConfig `mapstructure:"extract"`
	// MetadataWait bounds how long a file whose Pod the metadata source does not know yet is
	// held, opened but unread, before it is read without the Pod's metadata.
	MetadataWait time.Duration `mapstructure:"metadata_wait"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// MultilineConfig configures multi-line recombination. At most one of Preset and
// LineStartPattern may be set; with neither, recombination is off.
type MultilineConfig struct {
	// Preset selects a built-in rule: "klog", "stacktraces" or "auto" (both).
	Preset Preset `mapstructure:"preset"`
	// LineStartPattern is a regular expression matching the first line of a record.
	LineStartPattern string `mapstructure:"line_start_pattern"`
	// FlushTimeout is how long a record waits for continuation lines once its file is idle.
	FlushTimeout time.Duration `mapstructure:"flush_timeout"`
	// Include limits recombination to files whose path matches one of these globs; empty:
	// every file.
	Include []string `mapstructure:"include"`
}

// NamespaceFilter selects namespaces by glob (path.Match syntax): a file is read when its
// namespace matches one of Include (empty: every namespace) and none of Exclude.
type NamespaceFilter struct {
	Include []string `mapstructure:"include"`
	Exclude []string `mapstructure:"exclude"`
}

// ExtractConfig selects what of a Pod's metadata becomes resource attributes.
type ExtractConfig struct {
	// Metadata lists attribute names: k8s.node.name, k8s.namespace.uid (written as
	// otelcol_k8s.namespace.uid), and the workload names k8s.deployment.name,
	// k8s.replicaset.name, k8s.statefulset.name, k8s.daemonset.name, k8s.job.name,
	// k8s.cronjob.name.
	Metadata []string `mapstructure:"metadata"`
	// Labels are Pod or namespace labels copied to resource attributes.
	Labels []FieldExtractConfig `mapstructure:"labels"`
	// Annotations are Pod annotations copied to resource attributes.
	Annotations []FieldExtractConfig `mapstructure:"annotations"`
}

// FieldExtractConfig copies one label or annotation to a resource attribute.
type FieldExtractConfig struct {
	// TagName is the attribute name; empty: k8s.pod.labels.<key>, k8s.pod.annotations.<key>
	// or k8s.namespace.labels.<key> (contrib's k8s_attributes names).
	TagName string `mapstructure:"tag_name"`
	// Key is the label or annotation key.
	Key string `mapstructure:"key"`
	// From is pod (the default) or namespace (labels only).
	From string `mapstructure:"from"`
}

// RetryConfig is the backoff applied to a file whose batch was refused.
type RetryConfig struct {
	InitialInterval time.Duration `mapstructure:"initial_interval"`
	MaxInterval     time.Duration `mapstructure:"max_interval"`
}

var _ component.Config = (*Config)(nil)

func createDefaultConfig() component.Config {
	return &Config{
		Include:            []string{"/var/log/pods/*/*/*.log"},
		StartAt:            StartAtEnd,
		PollInterval:       200 * time.Millisecond,
		DiscoveryInterval:  2 * time.Second,
		DrainGrace:         4 * time.Second,
		CheckpointInterval: time.Second,
		MaxConcurrentFiles: 1024,
		MaxBytesPerPoll:    1 << 20,
		MaxLogSize:         1 << 20,
		FlushTimeout:       5 * time.Second,
		FingerprintSize:    1000,
		Multiline:          MultilineConfig{FlushTimeout: time.Second},
		RetryOnFailure:     RetryConfig{InitialInterval: 100 * time.Millisecond, MaxInterval: 5 * time.Second},
		Extract:            ExtractConfig{Metadata: defaultExtractMetadata()},
		MetadataWait:       2 * time.Second,
	}
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	var errs []error
	if len(c.Include) == 0 {
		errs = append(errs, errors.New("include: at least one pattern is required"))
	}
	for key, globs := range map[string][]string{
		"include": c.Include, "exclude": c.Exclude, "multiline.include": c.Multiline.Include,
		"namespaces.include": c.Namespaces.Include, "namespaces.exclude": c.Namespaces.Exclude,
	} {
		for _, p := range globs {
			if _, err := filepath.Match(p, ""); err != nil {
				errs = append(errs, fmt.Errorf("%s: bad glob pattern %q: %w", key, p, err))
			}
		}
	}
	if c.StartAt != StartAtEnd && c.StartAt != StartAtBeginning {
		errs = append(errs, fmt.Errorf("start_at: %q is neither %q nor %q", c.StartAt, StartAtEnd, StartAtBeginning))
	}
	positive := map[string]time.Duration{
		"poll_interval": c.PollInterval, "discovery_interval": c.DiscoveryInterval,
		"checkpoint_interval": c.CheckpointInterval,
		"flush_timeout":       c.FlushTimeout, "multiline.flush_timeout": c.Multiline.FlushTimeout,
		"retry_on_failure.initial_interval": c.RetryOnFailure.InitialInterval,
		"retry_on_failure.max_interval":     c.RetryOnFailure.MaxInterval,
	}
	for name, d := range positive {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive", name))
		}
	}
	if c.MetadataWait < 0 || c.MetadataWait > time.Minute {
		errs = append(errs, errors.New("metadata_wait must be between 0s and 1m"))
	}
	errs = append(errs, c.Extract.validate()...)
	if c.PodMetadata == nil && (len(c.Extract.Labels) > 0 || len(c.Extract.Annotations) > 0) {
		errs = append(errs, errors.New("extract: labels and annotations need pod_metadata"))
	}
	if c.DrainGrace < 0 {
		errs = append(errs, errors.New("drain_grace must not be negative"))
	}
	if c.RetryOnFailure.MaxInterval < c.RetryOnFailure.InitialInterval {
		errs = append(errs, errors.New("retry_on_failure.max_interval must not be below initial_interval"))
	}
	if c.MaxConcurrentFiles < 1 {
		errs = append(errs, errors.New("max_concurrent_files must be at least 1"))
	}
	if c.MaxBytesPerPoll < 4096 {
		errs = append(errs, errors.New("max_bytes_per_poll must be at least 4096"))
	}
	if c.MaxLogSize < 1024 || c.MaxLogSize > 1<<30 {
		errs = append(errs, errors.New("max_log_size must be between 1024 and 1073741824"))
	}
	if c.FingerprintSize < 16 || c.FingerprintSize > 64<<10 {
		errs = append(errs, errors.New("fingerprint_size must be between 16 and 65536"))
	}
	switch {
	case c.Multiline.Preset != "" && c.Multiline.LineStartPattern != "":
		errs = append(errs, errors.New("multiline: set preset or line_start_pattern, not both"))
	case c.Multiline.Preset != "" && c.Multiline.Preset != PresetKlog && c.Multiline.Preset != PresetStacktraces && c.Multiline.Preset != PresetAuto:
		errs = append(errs, fmt.Errorf("multiline.preset: unknown preset %q (known: %s, %s, %s)", c.Multiline.Preset, PresetKlog, PresetStacktraces, PresetAuto))
	case c.Multiline.LineStartPattern != "":
		if _, err := regexp.Compile(c.Multiline.LineStartPattern); err != nil {
			errs = append(errs, fmt.Errorf("multiline.line_start_pattern: %w", err))
		}
	}
	return errors.Join(errs...)
}
