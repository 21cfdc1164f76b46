// SPDX-License-Identifier: Apache-2.0

package idlegcextension

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
)

// Config configures the idle_gc extension.
type Config struct {
	// CheckInterval is how often the allocation rate is measured.
	CheckInterval time.Duration `mapstructure:"check_interval"`
	// IdleBelowKiBPerSecond is the allocation rate (KiB/s) under which the collector counts
	// as idle.
	IdleBelowKiBPerSecond int `mapstructure:"idle_below_kib_per_second"`
	// IdleAfter is how long the rate must stay under the threshold before the target is
	// lowered: short pauses in the work do not switch it.
	IdleAfter time.Duration `mapstructure:"idle_after"`
	// IdleGCPercent is the garbage collector's target while idle (GOGC's meaning: the heap may
	// grow by this percentage of the live heap before the next collection).
	IdleGCPercent int `mapstructure:"idle_gc_percent"`
	// ReleaseBinaryPages releases the resident pages of the collector's executable (code and
	// read-only data; Linux 5.4 or later) once the pipelines have started and on becoming
	// idle: what start-up alone touched stays out, what the collector uses comes back on
	// first touch.
	ReleaseBinaryPages bool `mapstructure:"release_binary_pages"`
	// MemoryLimitPercent, when GOMEMLIMIT is not set, sets the Go runtime's soft memory limit at
	// start to this percentage of the container's cgroup memory limit, so the runtime collects
	// harder near the limit instead of the kernel killing the process; 0 leaves the limit alone.
	MemoryLimitPercent int `mapstructure:"memory_limit_percent"`
}

var _ component.Config = (*Config)(nil)

// Validate checks the configuration.
func (c *Config) Validate() error {
	var errs []error
	if c.CheckInterval < 100*time.Millisecond {
		errs = append(errs, fmt.Errorf("check_interval %v: at least 100ms", c.CheckInterval))
	}
	if c.IdleBelowKiBPerSecond <= 0 {
		errs = append(errs, fmt.Errorf("idle_below_kib_per_second %d: must be positive", c.IdleBelowKiBPerSecond))
	}
	if c.IdleAfter < c.CheckInterval {
		errs = append(errs, fmt.Errorf("idle_after %v: at least check_interval (%v)", c.IdleAfter, c.CheckInterval))
	}
	if c.IdleGCPercent < 1 || c.IdleGCPercent > 100 {
		errs = append(errs, fmt.Errorf("idle_gc_percent %d: between 1 and 100", c.IdleGCPercent))
	}
	if c.MemoryLimitPercent < 0 || c.MemoryLimitPercent > 100 {
		errs = append(errs, fmt.Errorf("memory_limit_percent %d: between 0 (off) and 100", c.MemoryLimitPercent))
	}
	return errors.Join(errs...)
}
