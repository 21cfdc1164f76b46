// SPDX-License-Identifier: Apache-2.0

package klogparserprocessor // import "github.com/otelcol-k8s/otelcol-k8s/processor/klogparserprocessor"

import (
	"errors"
	"fmt"
	"time"
	_ "time/tzdata" // timezone names must resolve in images without a zoneinfo database

	"go.opentelemetry.io/collector/component"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
)

// Format is a log format the processor recognizes: text, json or zap.
type Format string

// Format names accepted in Config.Formats (untyped: they are metric attribute values too).
const (
	formatText = "text"
	formatJSON = "json"
	formatZap  = "zap"
)

// UnmarshalText accepts only the known formats, so a typo fails when the configuration is
// read.
func (f *Format) UnmarshalText(text []byte) error {
	switch v := Format(text); v {
	case formatText, formatJSON, formatZap:
		*f = v
		return nil
	}
	return fmt.Errorf("unknown format %q (want \"text\", \"json\" or \"zap\")", text)
}

// YearFrom is the reference time for the year of text header times: auto, timestamp,
// observed_timestamp or now.
type YearFrom string

// Year references accepted in Config.YearFrom.
const (
	yearFromAuto              YearFrom = "auto"
	yearFromTimestamp         YearFrom = "timestamp"
	yearFromObservedTimestamp YearFrom = "observed_timestamp"
	yearFromNow               YearFrom = "now"
)

// UnmarshalText accepts only the known year references.
func (y *YearFrom) UnmarshalText(text []byte) error {
	switch v := YearFrom(text); v {
	case yearFromAuto, yearFromTimestamp, yearFromObservedTimestamp, yearFromNow:
		*y = v
		return nil
	}
	return fmt.Errorf("unknown value %q (want auto, timestamp, observed_timestamp or now)", text)
}

// Config configures the klog_parser processor.
type Config struct {
	// SourceAttribute names the log attribute holding the klog line; empty parses the body.
	SourceAttribute string `mapstructure:"source_attribute"`
	// Formats lists the formats to recognize: "text" (klog's text), "json" (component-base's
	// JSON: msg with caller, v or err, no level) and "zap" (zap production JSON with a level,
	// which applications write too: off by default).
	Formats []Format `mapstructure:"formats"`
	// KeepOriginal copies the parsed line into OriginalAttribute before the body is replaced.
	KeepOriginal bool `mapstructure:"keep_original"`
	// OriginalAttribute is where KeepOriginal puts the line.
	OriginalAttribute string `mapstructure:"original_attribute"`
	// AttributesPrefix is prepended to the keys of the line's key/value pairs; empty puts
	// them at the top level as they are.
	AttributesPrefix string `mapstructure:"attributes_prefix"`
	// Timezone is the IANA zone (or "Local") of text header times, which carry none.
	Timezone string `mapstructure:"timezone"`
	// YearFrom picks the reference time for the year of text header times, which carry none:
	// "auto" (timestamp, else observed timestamp, else now), "timestamp",
	// "observed_timestamp" or "now".
	YearFrom YearFrom `mapstructure:"year_from"`
}

var _ component.Config = (*Config)(nil)

func createDefaultConfig() component.Config {
	return &Config{
		Formats:           []Format{formatText, formatJSON},
		OriginalAttribute: attr.LogRecordOriginal,
		Timezone:          "UTC",
		YearFrom:          yearFromAuto,
	}
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	var errs []error
	if len(c.Formats) == 0 {
		errs = append(errs, errors.New("formats: at least one of \"text\", \"json\" and \"zap\" is required"))
	}
	for _, f := range c.Formats {
		if f != formatText && f != formatJSON && f != formatZap {
			errs = append(errs, fmt.Errorf("formats: unknown format %q (want \"text\", \"json\" or \"zap\")", f))
		}
	}
	if attr.Reserved(c.AttributesPrefix) {
		errs = append(errs, fmt.Errorf("attributes_prefix: %q is inside a reserved attribute namespace", c.AttributesPrefix))
	}
	if c.KeepOriginal && c.OriginalAttribute == "" {
		errs = append(errs, errors.New("original_attribute: must not be empty when keep_original is true"))
	}
	if _, err := c.location(); err != nil {
		errs = append(errs, fmt.Errorf("timezone: %w", err))
	}
	switch c.YearFrom {
	case yearFromAuto, yearFromTimestamp, yearFromObservedTimestamp, yearFromNow:
	default:
		errs = append(errs, fmt.Errorf("year_from: unknown value %q (want auto, timestamp, observed_timestamp or now)", c.YearFrom))
	}
	return errors.Join(errs...)
}

func (c *Config) location() (*time.Location, error) {
	if c.Timezone == "" || c.Timezone == "UTC" {
		return time.UTC, nil
	}
	return time.LoadLocation(c.Timezone)
}

func (c *Config) hasFormat(name Format) bool {
	for _, f := range c.Formats {
		if f == name {
			return true
		}
	}
	return false
}
