#!/usr/bin/env bash
# Side-by-side benchmark: klog_parser against contrib's transform processor doing the same job
# with OTTL (ExtractPatterns + ParseKeyValue + ParseJSON), same corpus, same run.
# Usage: testbed/bench/klogparser.sh [benchtime] [rounds]   (defaults: 2000x 5)
set -euo pipefail
cd "$(dirname "$0")/klogparser"
benchtime="${1:-2000x}"
count="${2:-5}"

echo "== equivalence: the OTTL configuration must agree with klog_parser on the corpus"
go test -count=1 -run TestSameJob .

# One go test per round, both benchmarks back to back, so that load changes on a shared
# machine hit both alike; the medians over the rounds are compared.
echo "== $count rounds of: go test -run '^\$' -bench . -benchtime $benchtime -count 1"
go test -c -o klogparser.test . >/dev/null
trap 'rm -f klogparser.test' EXIT
out=""
for _ in $(seq "$count"); do
	out+="$(./klogparser.test -test.run '^$' -test.bench . -test.benchtime "$benchtime" -test.benchmem)"$'\n'
done
echo "$out" | grep '^Benchmark'

echo "$out" | awk '
function median(a, n,   i, j, t) {
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
/^Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name)
	for (i = 2; i < NF; i++) {
		if ($(i + 1) == "records/cpu-s") { k = name; rate[k, ++nr[k]] = $i }
		if ($(i + 1) == "allocs/op") allocs[name] = $i
		if ($(i + 1) == "ns/op") { k2 = name; ns[k2, ++nn[k2]] = $i }
	}
}
END {
	o = "BenchmarkKlogParser"; u = "BenchmarkTransformOTTL"
	for (i = 1; i <= nr[o]; i++) a[i] = rate[o, i]; ro = median(a, nr[o])
	for (i = 1; i <= nr[u]; i++) b[i] = rate[u, i]; ru = median(b, nr[u])
	printf "median records/cpu-s: klog_parser %.0f, transform/OTTL %.0f, ratio %.1fx\n", ro, ru, ro / ru
	printf "allocs/op (59-record batch): klog_parser %d, transform/OTTL %d, ratio %.1fx fewer\n", allocs[o], allocs[u], allocs[u] / allocs[o]
}'
