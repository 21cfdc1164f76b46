// SPDX-License-Identifier: Apache-2.0

package auditlogreceiver

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"go.opentelemetry.io/collector/component"
)

// Format is the audit log format of the files.
type Format string

// Formats.
const (
	// FormatAuditd is the Linux audit daemon's log (/var/log/audit/audit.log).
	FormatAuditd Format = "auditd"
	// FormatKubernetes is the Kubernetes API server's log backend: one JSON audit.k8s.io/v1
	// Event per line.
	FormatKubernetes Format = "kubernetes"
)

// UnmarshalText accepts only the known formats.
func (f *Format) UnmarshalText(text []byte) error {
	switch v := Format(text); v {
	case FormatAuditd, FormatKubernetes:
		*f = v
		return nil
	}
	return fmt.Errorf("%q: must be auditd or kubernetes", text)
}

// StartAt says where the very first start (no checkpoint) reads a file found at start.
type StartAt string

// StartAt values.
const (
	StartAtBeginning StartAt = "beginning"
	StartAtEnd       StartAt = "end"
)

// UnmarshalText accepts only the known values.
func (s *StartAt) UnmarshalText(text []byte) error {
	switch v := StartAt(text); v {
	case StartAtBeginning, StartAtEnd:
		*s = v
		return nil
	}
	return fmt.Errorf("%q: must be beginning or end", text)
}

// Config configures the audit log receiver.
type Config struct {
	// Include are glob patterns of the files read; rotated files must still match (auditd's
	// audit.log.1, the API server's audit-<time>.log) so that their rest is read.
	Include []string `mapstructure:"include"`
	// Format of the files.
	Format Format `mapstructure:"format"`
	// StartAt applies to the files found at the very first start (no checkpoint); files that
	// appear later are read from their beginning.
	StartAt StartAt `mapstructure:"start_at"`
	// PollInterval is how often files are looked for and read.
	PollInterval time.Duration `mapstructure:"poll_interval"`
	// EventTimeout: an auditd event whose EOE record has not come is complete this long after
	// its last record (single-record events have none).
	EventTimeout time.Duration `mapstructure:"event_timeout"`
	// MaxLineBytes bounds a line; a longer one is skipped and counted.
	MaxLineBytes int `mapstructure:"max_line_bytes"`
	// Storage is the storage extension that keeps the read offsets across restarts.
	Storage *component.ID `mapstructure:"storage"`
}

var _ component.Config = (*Config)(nil)

func createDefaultConfig() component.Config {
	return &Config{
		Include:      []string{"/var/log/audit/audit.log*"},
		Format:       FormatAuditd,
		StartAt:      StartAtEnd,
		PollInterval: time.Second,
		EventTimeout: 2 * time.Second,
		MaxLineBytes: 1 << 20,
	}
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	var errs []error
	if len(c.Include) == 0 {
		errs = append(errs, errors.New("include: empty"))
	}
	for _, p := range c.Include {
		if _, err := filepath.Match(p, ""); err != nil {
			errs = append(errs, fmt.Errorf("include %q: %w", p, err))
		}
	}
	if c.Format != FormatAuditd && c.Format != FormatKubernetes {
		errs = append(errs, fmt.Errorf("format %q: must be auditd or kubernetes", c.Format))
	}
	if c.StartAt != StartAtBeginning && c.StartAt != StartAtEnd {
		errs = append(errs, fmt.Errorf("start_at %q: must be beginning or end", c.StartAt))
	}
	if c.PollInterval <= 0 {
		errs = append(errs, fmt.Errorf("poll_interval %s: must be positive", c.PollInterval))
	}
	if c.EventTimeout <= 0 {
		errs = append(errs, fmt.Errorf("event_timeout %s: must be positive", c.EventTimeout))
	}
	if c.MaxLineBytes < 1024 {
		errs = append(errs, fmt.Errorf("max_line_bytes %d: must be at least 1024", c.MaxLineBytes))
	}
	return errors.Join(errs...)
}
