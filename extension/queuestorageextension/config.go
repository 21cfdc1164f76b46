// SPDX-License-Identifier: Apache-2.0

package queuestorageextension

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/component"
)

// Config configures the queue_storage extension.
type Config struct {
	// Directory holds one directory per client (design.md, rule 1).
	Directory string `mapstructure:"directory"`
	// CreateDirectory creates Directory (mode 0750) at start when it is missing.
	CreateDirectory bool `mapstructure:"create_directory"`
	// Fsync flushes every write to the disk before the call returns (design.md, rule 9).
	Fsync bool `mapstructure:"fsync"`
	// SegmentSize is the size of a segment file, in bytes, before the next one is started.
	SegmentSize int64 `mapstructure:"segment_size"`
	// ImportFileStorage, when set, is a file_storage directory: a client opening finds there the
	// file file_storage kept for the same client, copies its keys and values and renames it
	// (design.md, rule 14), so that a queue moved from file_storage keeps what it held.
	ImportFileStorage string `mapstructure:"import_file_storage"`
}

var _ component.Config = (*Config)(nil)

// minSegmentSize is the smallest segment_size accepted.
const minSegmentSize = 4 << 10

// Validate checks the configuration.
func (c *Config) Validate() error {
	var errs []error
	if c.Directory == "" {
		errs = append(errs, errors.New("directory: must be set"))
	}
	if c.SegmentSize < minSegmentSize {
		errs = append(errs, fmt.Errorf("segment_size %d: at least %d", c.SegmentSize, minSegmentSize))
	}
	return errors.Join(errs...)
}
