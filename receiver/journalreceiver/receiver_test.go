// SPDX-License-Identifier: Apache-2.0

package journalreceiver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-k8s/otelcol-k8s/internal/k8smodel/attr"
	"github.com/otelcol-k8s/otelcol-k8s/receiver/journalreceiver/internal/journaltest"
)

// TestDifferentialRecords compares every record the receiver emits with journalctl's reading of
// the same files (body, timestamp, severity, attributes, order), on a compact file and a
// regular one of another machine id.
func TestDifferentialRecords(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := filepath.Join(dir, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "system.journal")
	b := filepath.Join(dir, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "system.journal")
	require.NoError(t, os.MkdirAll(filepath.Dir(a), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Dir(b), 0o755))
	ea := journaltest.Generate(11, 1500, 30, 1_700_000_000_000_000)
	eb := journaltest.Generate(12, 700, 10, 1_700_000_000_000_500)
	journaltest.Write(t, a, ea, nil)
	journaltest.Write(t, b, eb, []string{"SYSTEMD_JOURNAL_COMPACT=0"})
	want := map[string]journaltest.JSONEntry{}
	for _, p := range []string{a, b} {
		for _, e := range journaltest.Read(t, p) {
			want[e.String("__CURSOR")] = e
		}
	}
	require.Len(t, want, len(ea)+len(eb))

	s := &sink{}
	start(t, testConfig(dir), s.consumer(t), nil)
	waitFor(t, s, len(want))
	recs := s.all()
	require.Len(t, recs, len(want))
	// Order: within each resource (a journal's unit: its stream), entries keep the file's order.
	prev := map[string]uint64{}
	for _, g := range recs {
		w, ok := want[g.cursor]
		require.True(t, ok, "cursor %s not in journalctl's output", g.cursor)
		delete(want, g.cursor)
		seq := w.Uint("__REALTIME_TIMESTAMP")
		if g.res[attr.HostID] == "" {
			t.Fatal("no host.id")
		}
		path := g.res[attr.LogFilePath].(string)
		require.Contains(t, []string{a, b}, path)
		key := fmt.Sprint(path, g.res[attr.JournalUnit])
		require.Greater(t, seq, prev[key])
		prev[key] = seq
		msg := w["MESSAGE"][0]
		if utf8.Valid(msg) {
			require.Equal(t, string(msg), g.body)
		} else {
			require.Equal(t, msg, g.body)
		}
		ts := w.Uint("__REALTIME_TIMESTAMP")
		if src := w.Uint("_SOURCE_REALTIME_TIMESTAMP"); src != 0 {
			ts = src
		}
		require.Equal(t, ts*1000, uint64(g.lr.Timestamp()))
		require.NotZero(t, g.lr.ObservedTimestamp())
		pri, _ := strconv.Atoi(w.String("PRIORITY"))
		require.Equal(t, severities[pri].n, g.lr.SeverityNumber())
		require.Equal(t, severities[pri].text, g.lr.SeverityText())
		if v, ok := w["_SYSTEMD_UNIT"]; ok {
			require.Equal(t, string(v[0]), g.res[attr.JournalUnit])
		} else {
			require.NotContains(t, g.res, attr.JournalUnit)
		}
		require.NotContains(t, g.rec, attr.JournalUnit)
		for f, name := range map[string]string{
			"SYSLOG_IDENTIFIER": attr.JournalIdentifier,
			"_TRANSPORT":        attr.JournalTransport, "_BOOT_ID": attr.JournalBootID,
		} {
			if v, ok := w[f]; ok {
				require.Equal(t, string(v[0]), g.rec[name], f)
			} else {
				require.NotContains(t, g.rec, name)
			}
		}
		if v, ok := w["_PID"]; ok {
			pid, _ := strconv.ParseInt(string(v[0]), 10, 64)
			require.Equal(t, pid, g.rec[attr.ProcessPID])
		}
		require.Equal(t, w.String("_HOSTNAME"), g.res[attr.HostName])
		for k := range g.rec {
			require.True(t, attr.Registered(k), "%s not in the registry", k)
		}
		for k := range g.res {
			require.True(t, attr.Registered(k), "%s not in the registry", k)
		}
	}
	require.Empty(t, want)
	t.Logf("%d records equal to journalctl's entries", len(recs))
}

// TestDefaultFilters: the default units and identifiers, and priority.
func TestDefaultFilters(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	entries := journaltest.Generate(21, 800, 12, 1_700_000_000_000_000)
	journaltest.Write(t, filepath.Join(dir, "system.journal"), entries, nil)
	def := createDefaultConfig().(*Config)
	for _, tc := range []struct {
		name     string
		priority Priority
	}{{"all priorities", "debug"}, {"warning and above", "warning"}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(dir)
			cfg.Units, cfg.Identifiers, cfg.Priority = def.Units, def.Identifiers, tc.priority
			maxPri, _ := tc.priority.level()
			want := 0
			for _, e := range entries {
				var unit, ident string
				pri := 0
				for _, f := range e.Fields {
					switch f.Name {
					case "_SYSTEMD_UNIT":
						unit = string(f.Value)
					case "SYSLOG_IDENTIFIER":
						ident = string(f.Value)
					case "PRIORITY":
						pri, _ = strconv.Atoi(string(f.Value))
					}
				}
				if (unit == "kubelet.service" || unit == "containerd.service" || unit == "docker.service" ||
					unit == "sandbox-image.service" || ident == "kernel") && pri <= maxPri {
					want++
				}
			}
			require.Greater(t, want, 50)
			s := &sink{}
			r, tel := start(t, cfg, s.consumer(t), nil)
			waitFor(t, s, want)
			// Every entry read (the checkpoint passes filtered ones too), and nothing more emitted.
			require.Eventually(t, func() bool { return counter(t, tel, "otelcol_receiver_journal_entries_read") == int64(len(entries)) }, 30e9, 5e6)
			require.NoError(t, r.Shutdown(context.Background()))
			require.Equal(t, want, s.count())
			for _, g := range s.all() {
				require.LessOrEqual(t, int(g.lr.SeverityNumber()), int(plog.SeverityNumberFatal4))
				require.GreaterOrEqual(t, g.lr.SeverityNumber(), severities[maxPri].n)
			}
		})
	}
}
