// SPDX-License-Identifier: Apache-2.0

package objspans

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/otel/trace"
)

// SamplingConfig chooses which of the traces the collector starts on its own are kept: those
// of objects that carry no context, or carry one under the link key (design.md rule 2). A span
// parented under an object's context follows that context's sampled flag instead. kube_lifecycle
// (`sampling`) and kube_events (`spans.sampling`) read this one block.
type SamplingConfig struct {
	// Ratio is the fraction of traces kept, from 0 (none) to 1 (all, the default).
	Ratio float64 `mapstructure:"ratio"`
	// Kinds overrides Ratio for the objects of a kind (the kind as the API writes it: Pod,
	// Node, Deployment...).
	Kinds map[string]float64 `mapstructure:"kinds"`
	// OnlyWithContext keeps no trace of an object that carries no context, its own or its
	// owner's: only what someone asked to trace is traced.
	OnlyWithContext bool `mapstructure:"only_with_context"`
}

// NewDefaultSamplingConfig keeps every trace.
func NewDefaultSamplingConfig() SamplingConfig { return SamplingConfig{Ratio: 1} }

// Validate checks the ratios.
func (c *SamplingConfig) Validate() error {
	var errs []error
	if !validRatio(c.Ratio) {
		errs = append(errs, fmt.Errorf("ratio %v: must be between 0 and 1", c.Ratio))
	}
	for k, r := range c.Kinds {
		if k == "" {
			errs = append(errs, errors.New("kinds: empty kind"))
		}
		if !validRatio(r) {
			errs = append(errs, fmt.Errorf("kinds: %s: ratio %v: must be between 0 and 1", k, r))
		}
	}
	return errors.Join(errs...)
}

func validRatio(r float64) bool { return !math.IsNaN(r) && r >= 0 && r <= 1 }

// Decision is a sampler's answer, with the reason when a trace is dropped.
type Decision uint8

// Decisions.
const (
	// Sample keeps the trace.
	Sample Decision = iota
	// DropUnsampledParent: the context the object carries says "not sampled".
	DropUnsampledParent
	// DropNoContext: only_with_context and the object carries none.
	DropNoContext
	// DropRatio: the trace id is outside the kind's ratio.
	DropRatio
)

// String names the decision, for the receivers' counters.
func (d Decision) String() string {
	switch d {
	case Sample:
		return "sampled"
	case DropUnsampledParent:
		return "unsampled_parent"
	case DropNoContext:
		return "no_context"
	case DropRatio:
		return "ratio"
	}
	return "unknown"
}

// Decide says whether a trace about an object of kind is kept (design.md rule 2). sc is the
// context the object carries (its own or its owner's; invalid when none), traceID the trace the
// spans go into (sc's when they are parented under it, else the derived one). It depends on
// nothing else, so two receivers, a restarted collector and a second replica decide alike.
func (c *SamplingConfig) Decide(kind string, sc trace.SpanContext, traceID pcommon.TraceID) Decision {
	if sc.IsValid() {
		if !sc.IsSampled() {
			return DropUnsampledParent
		}
		if traceID == pcommon.TraceID(sc.TraceID()) {
			return Sample // a child of a sampled context: its trace was already chosen
		}
	} else if c.OnlyWithContext {
		return DropNoContext
	}
	ratio := c.Ratio
	if r, ok := c.Kinds[kind]; ok {
		ratio = r
	}
	if keep(traceID, ratio) {
		return Sample
	}
	return DropRatio
}

// keep compares the trace id's last 56 bits (the random part of a W3C trace id) with the
// threshold of ratio, as OpenTelemetry's consistent probability sampling does: a trace kept at
// a ratio is kept at every higher one.
func keep(id pcommon.TraceID, ratio float64) bool {
	switch {
	case ratio >= 1:
		return true
	case ratio <= 0:
		return false
	}
	const maxR = uint64(1) << 56
	r := binary.BigEndian.Uint64(id[8:]) & (maxR - 1)
	threshold := uint64((1 - ratio) * float64(maxR))
	return r >= threshold
}
