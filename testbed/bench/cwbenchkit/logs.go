package cwbenchkit

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// Logs builds the pdata input of every ConsumeLogs call. The module asks for the oldest pdata
// either benchmark uses, so each program builds it with its own collector release.
func Logs(chunks [][]Source) []plog.Logs {
	out := make([]plog.Logs, 0, len(chunks))
	for _, c := range chunks {
		ld := plog.NewLogs()
		for _, src := range c {
			rl := ld.ResourceLogs().AppendEmpty()
			for k, v := range src.Resource {
				rl.Resource().Attributes().PutStr(k, v)
			}
			lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
			for _, r := range src.Records {
				lr := lrs.AppendEmpty()
				lr.SetTimestamp(pcommon.NewTimestampFromTime(r.Timestamp))
				lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(r.Timestamp))
				lr.SetSeverityNumber(plog.SeverityNumberInfo)
				lr.Body().SetStr(r.Body)
				lr.Attributes().PutStr("log.iostream", "stdout")
			}
		}
		out = append(out, ld)
	}
	return out
}
