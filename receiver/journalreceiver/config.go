// SPDX-License-Identifier: Apache-2.0

package journalreceiver

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
)

// StartAt says where the very first start (no checkpoint) reads from.
type StartAt string

// StartAt values.
const (
	// StartAtBeginning reads every entry the files hold: the node's logs since its first boot
	// that journald still keeps (the kubelet's start is why one looks).
	StartAtBeginning StartAt = "beginning"
	// StartAtEnd reads only entries written after the start.
	StartAtEnd StartAt = "end"
)

// Priority is a syslog priority name (journal field PRIORITY, 0 to 7).
type Priority string

// priorities in PRIORITY order.
var priorities = []Priority{"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"}

func (p Priority) level() (int, bool) {
	for i, q := range priorities {
		if q == p {
			return i, true
		}
	}
	return 0, false
}

// Config configures the journal receiver.
type Config struct {
	// Directories are searched for journal files: *.journal and *.journal~ in each and in
	// each subdirectory (one per machine id).
	Directories []string `mapstructure:"directories"`
	// Units selects entries by _SYSTEMD_UNIT.
	Units []string `mapstructure:"units"`
	// Identifiers selects entries by SYSLOG_IDENTIFIER ("kernel" for kernel messages).
	Identifiers []string `mapstructure:"identifiers"`
	// Priority drops entries less important than this (a PRIORITY above it). Entries without
	// a PRIORITY pass.
	Priority Priority `mapstructure:"priority"`
	// StartAt is where the very first start, with no checkpoint, reads from.
	StartAt StartAt `mapstructure:"start_at"`
	// PollInterval is how often files are checked for new entries and new files.
	PollInterval time.Duration `mapstructure:"poll_interval"`
	// MaxBatch bounds the records of one batch passed to the next consumer.
	MaxBatch int `mapstructure:"max_batch"`
	// Storage is the storage extension that keeps the cursor checkpoint across restarts.
	Storage *component.ID `mapstructure:"storage"`
}

var _ component.Config = (*Config)(nil)

func createDefaultConfig() component.Config {
	return &Config{
		Directories:  []string{"/var/log/journal", "/run/log/journal"},
		Units:        []string{"kubelet.service", "containerd.service", "docker.service", "sandbox-image.service"},
		Identifiers:  []string{"kernel"},
		Priority:     "debug",
		StartAt:      StartAtBeginning,
		PollInterval: 250 * time.Millisecond,
		MaxBatch:     1000,
	}
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	var errs []error
	if len(c.Directories) == 0 {
		errs = append(errs, errors.New("directories: empty"))
	}
	if _, ok := c.Priority.level(); !ok {
		errs = append(errs, fmt.Errorf("priority %q: must be one of %v", c.Priority, priorities))
	}
	if c.StartAt != StartAtBeginning && c.StartAt != StartAtEnd {
		errs = append(errs, fmt.Errorf("start_at %q: must be beginning or end", c.StartAt))
	}
	if c.PollInterval <= 0 {
		errs = append(errs, fmt.Errorf("poll_interval %s: must be positive", c.PollInterval))
	}
	if c.MaxBatch <= 0 {
		errs = append(errs, fmt.Errorf("max_batch %d: must be positive", c.MaxBatch))
	}
	return errors.Join(errs...)
}
