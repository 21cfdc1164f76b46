// SPDX-License-Identifier: Apache-2.0

package klogparserprocessor

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenObserved is the observed time of every golden record; it fixes the inferred year.
var goldenObserved = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// readRecords splits a log file into records the way a runtime joins klog's multi-line
// values: a line starting with a tab or " >" continues the previous record.
func readRecords(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var recs []string
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if len(recs) > 0 && (strings.HasPrefix(line, "\t") || strings.HasPrefix(line, " >")) {
			recs[len(recs)-1] += "\n" + line
			continue
		}
		recs = append(recs, line)
	}
	return recs
}

// typed renders a value so that the golden JSON keeps int and double apart.
func typed(v pcommon.Value) any {
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return map[string]int64{"int": v.Int()}
	case pcommon.ValueTypeDouble:
		return map[string]float64{"double": v.Double()}
	case pcommon.ValueTypeMap:
		m := map[string]any{}
		for k, e := range v.Map().All() {
			m[k] = typed(e)
		}
		return m
	case pcommon.ValueTypeSlice:
		s := []any{}
		for _, e := range v.Slice().All() {
			s = append(s, typed(e))
		}
		return s
	case pcommon.ValueTypeEmpty:
		return nil
	}
	return v.AsRaw()
}

func goldenRecord(lr plog.LogRecord) map[string]any {
	out := map[string]any{
		"body":       typed(lr.Body()),
		"attributes": typed(pcommon.NewValueEmpty()),
	}
	attrs := pcommon.NewValueMap()
	lr.Attributes().CopyTo(attrs.Map())
	out["attributes"] = typed(attrs)
	if lr.SeverityNumber() != plog.SeverityNumberUnspecified {
		out["severity_number"] = int(lr.SeverityNumber())
		out["severity_text"] = lr.SeverityText()
	}
	if lr.Timestamp() != 0 {
		out["timestamp"] = lr.Timestamp().AsTime().UTC().Format(time.RFC3339Nano)
	}
	return out
}

func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "golden", "*.log"))
	require.NoError(t, err)
	require.NotEmpty(t, inputs)
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			lines := readRecords(t, in)
			bodies := make([]any, len(lines))
			for i, l := range lines {
				bodies[i] = l
			}
			recs, _ := runAt(t, createDefaultConfig().(*Config), goldenObserved, nil, bodies...)
			var b strings.Builder
			for _, lr := range recs {
				js, err := json.Marshal(goldenRecord(lr))
				require.NoError(t, err)
				b.Write(js)
				b.WriteByte('\n')
			}
			golden := strings.TrimSuffix(in, ".log") + ".golden.jsonl"
			if *update {
				require.NoError(t, os.WriteFile(golden, []byte(b.String()), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			require.Equal(t, string(want), b.String())
		})
	}
}
