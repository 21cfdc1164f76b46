// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Metadata is the subset of the collector's metadata.yaml schema that mdgen understands.
type Metadata struct {
	Type          string    `yaml:"type"`
	GithubProject string    `yaml:"github_project"`
	Status        Status    `yaml:"status"`
	Tests         Tests     `yaml:"tests"`
	Telemetry     Telemetry `yaml:"telemetry"`
}

// Status describes the component class and the stability of each signal.
type Status struct {
	Class      string              `yaml:"class"`
	Stability  map[string][]string `yaml:"stability"`
	Codeowners struct {
		Active []string `yaml:"active"`
	} `yaml:"codeowners"`
}

// Tests controls the generated tests: the lifecycle test in generated_component_test.go and
// the goleak TestMain in generated_package_test.go.
type Tests struct {
	// Config is applied over the default configuration (through confmap, as the collector
	// unmarshals a component's configuration) for the lifecycle test: endpoints on 127.0.0.1,
	// no retries, a kubeconfig naming an API server nothing listens on.
	Config map[string]any `yaml:"config"`
	// ExpectConsumerError makes the lifecycle test require an error from the data it sends to
	// a processor or exporter (an exporter pointed at an endpoint nothing listens on).
	ExpectConsumerError bool `yaml:"expect_consumer_error"`
	// ExpectStartError, when set, is a part of the error Start must return with the test
	// configuration (a component whose Start waits for a server); Shutdown must still succeed.
	ExpectStartError string `yaml:"expect_start_error"`
	// SkipLifecycle is refused: every component runs its lifecycle test (see validate).
	SkipLifecycle bool `yaml:"skip_lifecycle"`
	// GoLeak configures the TestMain of generated_package_test.go.
	GoLeak GoLeak `yaml:"goleak"`
}

// GoLeak configures goleak.VerifyTestMain for the component's package.
type GoLeak struct {
	// Ignore lists goroutines that do not belong to the component: Top by the function at the
	// top of their stack (goleak.IgnoreTopFunction), Any by a function anywhere in it
	// (goleak.IgnoreAnyFunction).
	Ignore struct {
		Top []string `yaml:"top"`
		Any []string `yaml:"any"`
	} `yaml:"ignore"`
	// Setup names a func() of the package's tests that runs before any test.
	Setup string `yaml:"setup"`
	// Teardown names a func(exitCode int) of the package's tests that runs after every test,
	// before goroutines are checked (goleak.Cleanup).
	Teardown string `yaml:"teardown"`
}

// Telemetry lists the component's own metrics.
type Telemetry struct {
	Metrics map[string]Metric `yaml:"metrics"`
}

// Metric is one instrument of the component's own telemetry.
type Metric struct {
	Enabled     bool        `yaml:"enabled"`
	Description string      `yaml:"description"`
	Unit        string      `yaml:"unit"`
	Sum         *Sum        `yaml:"sum"`
	Gauge       *Instrument `yaml:"gauge"`
	Histogram   *Instrument `yaml:"histogram"`
}

// Instrument holds the value type of a gauge or histogram.
type Instrument struct {
	ValueType string `yaml:"value_type"`
}

// Sum is a counter or up-down counter.
type Sum struct {
	ValueType string `yaml:"value_type"`
	Monotonic bool   `yaml:"monotonic"`
}

var (
	typePattern   = regexp.MustCompile(`^[a-zA-Z][0-9a-zA-Z_]{0,62}$`)
	metricPattern = regexp.MustCompile(`^[a-z][a-z0-9_.]*$`)
	levels        = []string{"development", "alpha", "beta", "stable", "deprecated", "unmaintained"}
	classes       = map[string][]string{
		"receiver":  {"logs", "traces", "metrics"},
		"processor": {"logs", "traces", "metrics"},
		"exporter":  {"logs", "traces", "metrics"},
		"extension": {"extension"},
	}
)

// loadMetadata reads and validates a metadata.yaml file.
func loadMetadata(path string) (*Metadata, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var md Metadata
	dec := yaml.NewDecoder(strings.NewReader(string(raw)))
	dec.KnownFields(true)
	if err := dec.Decode(&md); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := md.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &md, nil
}

func (md *Metadata) validate() error {
	var errs []error
	if !typePattern.MatchString(md.Type) {
		errs = append(errs, fmt.Errorf("type %q must match %s", md.Type, typePattern))
	}
	if md.GithubProject == "" {
		errs = append(errs, errors.New("github_project is required"))
	}
	signals, ok := classes[md.Status.Class]
	if !ok {
		errs = append(errs, fmt.Errorf("status.class %q must be receiver, processor, exporter or extension", md.Status.Class))
	}
	if len(md.Status.Stability) == 0 {
		errs = append(errs, errors.New("status.stability must name at least one level"))
	}
	seen := map[string]bool{}
	for level, sigs := range md.Status.Stability {
		if !contains(levels, level) {
			errs = append(errs, fmt.Errorf("stability level %q is not one of %v", level, levels))
		}
		for _, s := range sigs {
			if !contains(signals, s) {
				errs = append(errs, fmt.Errorf("signal %q is not valid for a %s", s, md.Status.Class))
			}
			if seen[s] {
				errs = append(errs, fmt.Errorf("signal %q has more than one stability level", s))
			}
			seen[s] = true
		}
	}
	errs = append(errs, md.Tests.validate(md.Status.Class)...)
	for name, m := range md.Telemetry.Metrics {
		if !metricPattern.MatchString(name) {
			errs = append(errs, fmt.Errorf("metric %q must match %s", name, metricPattern))
		}
		if !m.Enabled {
			errs = append(errs, fmt.Errorf("metric %q: disabled metrics are not supported; remove it or set enabled: true", name))
		}
		if m.Description == "" {
			errs = append(errs, fmt.Errorf("metric %q needs a description", name))
		}
		n := 0
		for _, set := range []bool{m.Sum != nil, m.Gauge != nil, m.Histogram != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			errs = append(errs, fmt.Errorf("metric %q must be exactly one of sum, gauge, histogram", name))
			continue
		}
		if vt := m.valueType(); vt != "int" && vt != "double" {
			errs = append(errs, fmt.Errorf("metric %q value_type %q must be int or double", name, vt))
		}
	}
	return errors.Join(errs...)
}

var goIdentPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (t Tests) validate(class string) []error {
	var errs []error
	if t.SkipLifecycle {
		errs = append(errs, errors.New("tests.skip_lifecycle: every component runs its lifecycle test; give it a tests.config that starts without live dependencies (an endpoint on 127.0.0.1), or tests.expect_start_error when Start must wait for one"))
	}
	if t.ExpectConsumerError && class != "processor" && class != "exporter" {
		errs = append(errs, fmt.Errorf("tests.expect_consumer_error: only processors and exporters are sent data, not a %s", class))
	}
	if t.ExpectConsumerError && t.ExpectStartError != "" {
		errs = append(errs, errors.New("tests.expect_consumer_error: no data is sent when Start fails (tests.expect_start_error)"))
	}
	for key, name := range map[string]string{"setup": t.GoLeak.Setup, "teardown": t.GoLeak.Teardown} {
		if name != "" && !goIdentPattern.MatchString(name) {
			errs = append(errs, fmt.Errorf("tests.goleak.%s: %q is not a Go identifier", key, name))
		}
	}
	for key, list := range map[string][]string{"top": t.GoLeak.Ignore.Top, "any": t.GoLeak.Ignore.Any} {
		for _, f := range list {
			if f == "" || strings.ContainsAny(f, " \t\n\"") {
				errs = append(errs, fmt.Errorf("tests.goleak.ignore.%s: %q is not a function name as goleak prints it", key, f))
			}
		}
	}
	return errs
}

// Signal is one signal of the component with its stability level.
type Signal struct {
	Name  string // logs, traces, metrics, extension
	Level string // development, alpha, ...
}

// signals returns the component's signals in a stable order.
func (md *Metadata) signals() []Signal {
	var out []Signal
	for _, level := range levels {
		sigs := append([]string(nil), md.Status.Stability[level]...)
		sort.Strings(sigs)
		for _, s := range sigs {
			out = append(out, Signal{Name: s, Level: level})
		}
	}
	return out
}

// MetricNames returns the metric keys in sorted order.
func (md *Metadata) MetricNames() []string {
	names := make([]string, 0, len(md.Telemetry.Metrics))
	for n := range md.Telemetry.Metrics {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (m Metric) valueType() string {
	switch {
	case m.Sum != nil:
		return m.Sum.ValueType
	case m.Gauge != nil:
		return m.Gauge.ValueType
	case m.Histogram != nil:
		return m.Histogram.ValueType
	}
	return ""
}

// goType is the otel metric API type of the instrument, e.g. "Int64Counter".
func (m Metric) goType() string {
	prefix := "Int64"
	if m.valueType() == "double" {
		prefix = "Float64"
	}
	switch {
	case m.Sum != nil && m.Sum.Monotonic:
		return prefix + "Counter"
	case m.Sum != nil:
		return prefix + "UpDownCounter"
	case m.Gauge != nil:
		return prefix + "Gauge"
	default:
		return prefix + "Histogram"
	}
}

// kind is the human name of the instrument for documentation.
func (m Metric) kind() string {
	switch {
	case m.Sum != nil && m.Sum.Monotonic:
		return "Sum (monotonic)"
	case m.Sum != nil:
		return "Sum (non-monotonic)"
	case m.Gauge != nil:
		return "Gauge"
	default:
		return "Histogram"
	}
}

// camel turns "processor_klog_parser.records" into "ProcessorKlogParserRecords".
func camel(s string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == '_' || r == '.' }) {
		b.WriteString(strings.ToUpper(part[:1]))
		b.WriteString(part[1:])
	}
	return b.String()
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
