#!/usr/bin/env bash
# object_ref against klog_parser on the same records: klog_parser alone versus
# klog_parser -> object_ref, alternating batch by batch in one run; prints, per record mix, the
# median over COUNT runs of each metric (see bench_test.go for what they mean). The same is run
# with object_ref replaced by its pdata floor (floor_test.go): the pdata writes object_ref's
# output needs, known in advance, which bound from below what any object_ref can cost.
# Usage: testbed/bench/objectref.sh [count]   (default 10)
set -euo pipefail
cd "$(dirname "$0")/objectref"
count="${1:-10}"

echo "== convergence: text and JSON lines of one klog call agree after klog_parser -> object_ref"
go test -count=1 -run TestTextAndJSONLinesConverge .

echo "== allocations per record (independent of machine load)"
go test -count=1 -run TestAllocationsPerRecord -v . | grep -E 'allocations per record|^(ok|FAIL|---)'

echo "== the pdata floor writes what object_ref writes"
go test -count=1 -run TestPdataFloorMatchesObjectRef .

echo "== go test -run '^$' -bench 'ObjectRefVsKlogParser|PdataFloorVsKlogParser' -benchtime 100x -count $count"
out="$(go test -run '^$' -bench 'ObjectRefVsKlogParser|PdataFloorVsKlogParser' -benchtime 100x -count "$count" .)"
echo "$out" | grep '^Benchmark'

echo "$out" | awk '
function median(a, n,   i, j, t) {
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
/^Benchmark(ObjectRef|PdataFloor)VsKlogParser/ {
	name = $1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name); sub(/VsKlogParser/, "", name)
	if (!(name in seen)) { seen[name] = 1; order[++names] = name }
	runs[name]++
	for (i = 2; i < NF; i++) if ($(i + 1) ~ /_%$|ns\/record$/) val[name, $(i + 1), runs[name]] = $i
}
END {
	split("parser_ns/record object_ref_ns/record object_ref_% object_ref_cpu_%", metrics, " ")
	for (n = 1; n <= names; n++) {
		name = order[n]; line = sprintf("median of %d, %-27s", runs[name], name)
		for (m = 1; m <= 4; m++) {
			for (r = 1; r <= runs[name]; r++) a[r] = val[name, metrics[m], r]
			line = line sprintf("  %s %.1f", metrics[m], median(a, runs[name]))
		}
		print line
	}
}'
