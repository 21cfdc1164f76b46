// SPDX-License-Identifier: Apache-2.0

package kubeeventsreceiver

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/objspans"
	"github.com/otelcol-k8s/otelcol-k8s/internal/kubeclient"
)

// API selects the Events API the receiver watches.
type API string

// APIs.
const (
	// APIAuto watches events.k8s.io/v1 where discovery serves it, core/v1 elsewhere.
	APIAuto API = "auto"
	// APIEventsV1 watches events.k8s.io/v1.
	APIEventsV1 API = "events.k8s.io/v1"
	// APICoreV1 watches core/v1 Events.
	APICoreV1 API = "v1"
)

// UnmarshalText accepts only the known APIs, so a typo fails when the configuration is read.
func (a *API) UnmarshalText(text []byte) error {
	switch v := API(text); v {
	case APIAuto, APIEventsV1, APICoreV1:
		*a = v
		return nil
	}
	return fmt.Errorf("%q is not auto, events.k8s.io/v1 or v1", text)
}

// Series states a record can report, for series.emit.
const (
	StateSingleton = "singleton"
	StateStart     = "start"
	StateOngoing   = "ongoing"
	StateFinished  = "finished"
)

// Config is the kube_events receiver configuration.
type Config struct {
	// Kubeconfig is the path of a kubeconfig file; empty uses the in-cluster service account.
	Kubeconfig string `mapstructure:"kubeconfig"`
	// API is auto, events.k8s.io/v1 or v1.
	API API `mapstructure:"api"`
	// Namespaces limits the watch to these namespaces (one watch each); empty watches all.
	Namespaces []string `mapstructure:"namespaces"`
	// FieldSelector is passed to the API server (type, reason, regarding.kind,
	// reportingController, ... as the API supports them).
	FieldSelector string `mapstructure:"field_selector"`
	// Include keeps only Events whose reason and type are listed (empty list: any).
	Include Filter `mapstructure:"include"`
	// Exclude drops Events whose reason or type is listed.
	Exclude Filter `mapstructure:"exclude"`
	// ClusterName is written as the resource's k8s.cluster.name when set.
	ClusterName string `mapstructure:"cluster_name"`
	// Series configures series inference.
	Series SeriesConfig `mapstructure:"series"`
	// Storage is the storage extension that keeps the checkpoint of a single replica.
	Storage *component.ID `mapstructure:"storage"`
	// LeaderElection runs the watch only in the holder of a Lease; the checkpoint then lives in
	// a ConfigMap beside the Lease.
	LeaderElection LeaderElectionConfig `mapstructure:"leader_election"`
	// Client configures the API client.
	Client ClientConfig `mapstructure:"client"`
	// TraceContext names an extension that gives the span context of a Kubernetes object (the
	// trace_context extension): spans parent or link to the regarding object's context and log
	// records carry its trace and span id.
	TraceContext *component.ID `mapstructure:"trace_context"`
	// Spans configures the spans of a traces pipeline.
	Spans SpansConfig `mapstructure:"spans"`
	// Checkpoint paces the checkpoint writes.
	Checkpoint CheckpointConfig `mapstructure:"checkpoint"`
	// ConsumerRetry paces the resends of a batch of records or spans the next consumer refused
	// (an exporter outage). Its cap bounds how long delivery resumes after the outage ends, so
	// it is short, unlike the API client's backoff.
	ConsumerRetry BackoffConfig `mapstructure:"consumer_retry"`

	// prevent unkeyed literal initialization
	_ struct{}
}

var _ component.Config = (*Config)(nil)

// Filter lists Event reasons and types.
type Filter struct {
	Reasons []string `mapstructure:"reasons"`
	Types   []string `mapstructure:"types"`
}

// SeriesConfig configures series inference (design.md rule 3).
type SeriesConfig struct {
	// Emit lists the states that become records: singleton, start, ongoing, finished.
	Emit []string `mapstructure:"emit"`
	// FinishWindow is the new recorder's finish window: a write whose last observed time is older
	// is the series' final write.
	FinishWindow time.Duration `mapstructure:"finish_window"`
	// HeartbeatTimeout finishes a new-recorder series after this long without a write; above the
	// recorder's 30m heartbeat.
	HeartbeatTimeout time.Duration `mapstructure:"heartbeat_timeout"`
	// FinishAfter finishes a legacy (core/v1) series after this long without an occurrence.
	FinishAfter time.Duration `mapstructure:"finish_after"`
	// OngoingInterval is the least occurrence time between two ongoing records of a legacy series.
	OngoingInterval time.Duration `mapstructure:"ongoing_interval"`
	// MaxOpen bounds the open series kept in memory (and, separately, finished ones remembered).
	MaxOpen int `mapstructure:"max_open"`
	// TombstoneTTL is how long a finished series is remembered against late writes.
	TombstoneTTL time.Duration `mapstructure:"tombstone_ttl"`
	// SweepInterval is how often silent series are looked for.
	SweepInterval time.Duration `mapstructure:"sweep_interval"`
}

// LeaderElectionConfig configures the coordination.k8s.io/v1 Lease: the repository's one
// leader_election block (internal/kubeclient), shared with kube_lifecycle.
type LeaderElectionConfig = kubeclient.LeaderElectionConfig

// SpanMode says how a span relates to its regarding object's trace context.
type SpanMode string

// Span modes.
const (
	// SpanModeParent makes the span a child of the object's context (in the object's trace).
	SpanModeParent SpanMode = "parent"
	// SpanModeLink keeps the span in its own trace and links it to the object's context.
	SpanModeLink SpanMode = "link"
)

// UnmarshalText accepts only the known modes.
func (m *SpanMode) UnmarshalText(text []byte) error {
	switch v := SpanMode(text); v {
	case SpanModeParent, SpanModeLink:
		*m = v
		return nil
	}
	return fmt.Errorf("%q is not parent or link", text)
}

// SpansConfig configures the spans (design.md rule 9).
type SpansConfig struct {
	// Mode is parent or link; it matters only with trace_context.
	Mode SpanMode `mapstructure:"mode"`
	// QueueSize bounds the spans waiting for the traces consumer; when full, new spans are
	// dropped and counted (the logs never wait for the traces pipeline, rule 9.7).
	QueueSize int `mapstructure:"queue_size"`
	// Sampling chooses which spans are made (the block kube_lifecycle reads as sampling; see
	// internal/k8smodel/objspans).
	Sampling objspans.SamplingConfig `mapstructure:"sampling"`
}

// CheckpointConfig paces the checkpoint writes (design.md rule 5.5).
type CheckpointConfig struct {
	// Interval is the least time between two checkpoint writes; the last state is also written
	// when a term ends (shutdown, loss of the Lease).
	Interval time.Duration `mapstructure:"interval"`
}

// ClientConfig configures the API client's pacing.
type ClientConfig struct {
	// QPS and Burst limit the requests per second on the client side.
	QPS   float32 `mapstructure:"qps"`
	Burst int     `mapstructure:"burst"`
	// PageSize is the number of Events per list page.
	PageSize int64 `mapstructure:"page_size"`
	// Backoff paces retries of failed lists and watches.
	Backoff BackoffConfig `mapstructure:"backoff"`
}

// BackoffConfig is an exponential backoff with jitter.
type BackoffConfig struct {
	InitialInterval time.Duration `mapstructure:"initial_interval"`
	MaxInterval     time.Duration `mapstructure:"max_interval"`
}

func createDefaultConfig() component.Config {
	return &Config{
		API: APIAuto,
		Series: SeriesConfig{
			Emit:             []string{StateSingleton, StateStart, StateOngoing, StateFinished},
			FinishWindow:     6 * time.Minute,
			HeartbeatTimeout: 40 * time.Minute,
			FinishAfter:      15 * time.Minute,
			OngoingInterval:  30 * time.Minute,
			MaxOpen:          10000,
			TombstoneTTL:     75 * time.Minute,
			SweepInterval:    10 * time.Second,
		},
		LeaderElection: kubeclient.NewDefaultLeaderElectionConfig("otelcol-k8s-events"),
		Client: ClientConfig{
			QPS: 5, Burst: 10, PageSize: 500,
			Backoff: BackoffConfig{InitialInterval: time.Second, MaxInterval: 5 * time.Minute},
		},
		Spans:         SpansConfig{Mode: SpanModeParent, QueueSize: 10000, Sampling: objspans.NewDefaultSamplingConfig()},
		Checkpoint:    CheckpointConfig{Interval: 5 * time.Second},
		ConsumerRetry: BackoffConfig{InitialInterval: time.Second, MaxInterval: 30 * time.Second},
	}
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	var errs []error
	switch c.API {
	case APIAuto, APIEventsV1, APICoreV1:
	default:
		errs = append(errs, fmt.Errorf("api: %q is not auto, events.k8s.io/v1 or v1", c.API))
	}
	switch c.Spans.Mode {
	case SpanModeParent, SpanModeLink:
	default:
		errs = append(errs, fmt.Errorf("spans.mode: %q is not parent or link", c.Spans.Mode))
	}
	for _, s := range c.Series.Emit {
		switch s {
		case StateSingleton, StateStart, StateOngoing, StateFinished:
		default:
			errs = append(errs, fmt.Errorf("series.emit: unknown state %q", s))
		}
	}
	s := c.Series
	positive := map[string]time.Duration{
		"series.finish_window": s.FinishWindow, "series.heartbeat_timeout": s.HeartbeatTimeout,
		"series.finish_after": s.FinishAfter, "series.tombstone_ttl": s.TombstoneTTL,
		"series.sweep_interval": s.SweepInterval, "client.backoff.initial_interval": c.Client.Backoff.InitialInterval,
		"consumer_retry.initial_interval": c.ConsumerRetry.InitialInterval,
	}
	for _, key := range []string{
		"series.finish_window", "series.heartbeat_timeout", "series.finish_after",
		"series.tombstone_ttl", "series.sweep_interval", "client.backoff.initial_interval",
		"consumer_retry.initial_interval",
	} {
		if positive[key] <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive", key))
		}
	}
	if s.HeartbeatTimeout <= s.FinishWindow {
		errs = append(errs, errors.New("series.heartbeat_timeout must exceed series.finish_window"))
	}
	if s.OngoingInterval < 0 {
		errs = append(errs, errors.New("series.ongoing_interval must not be negative"))
	}
	if c.Checkpoint.Interval <= 0 {
		errs = append(errs, errors.New("checkpoint.interval must be positive"))
	}
	if c.Spans.QueueSize <= 0 {
		errs = append(errs, errors.New("spans.queue_size must be positive"))
	}
	if err := c.Spans.Sampling.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("spans.sampling: %w", err))
	}
	if s.MaxOpen <= 0 {
		errs = append(errs, errors.New("series.max_open must be positive"))
	}
	if c.Client.Backoff.MaxInterval < c.Client.Backoff.InitialInterval {
		errs = append(errs, errors.New("client.backoff.max_interval must not be below initial_interval"))
	}
	if c.ConsumerRetry.MaxInterval < c.ConsumerRetry.InitialInterval {
		errs = append(errs, errors.New("consumer_retry.max_interval must not be below initial_interval"))
	}
	if c.Client.QPS <= 0 || c.Client.Burst <= 0 {
		errs = append(errs, errors.New("client.qps and client.burst must be positive"))
	}
	if c.Client.PageSize <= 0 {
		errs = append(errs, errors.New("client.page_size must be positive"))
	}
	if err := c.LeaderElection.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
