#!/usr/bin/env bash
# Side-by-side benchmark: cri_log vs contrib filelog + container operator, same corpus, one run.
# Usage: testbed/bench/crilogreceiver.sh [files] [lines] [rounds]
# Prints one JSON line per receiver run and the ratios (lines per CPU-second, peak RSS).
set -euo pipefail
files=${1:-200}
lines=${2:-2000000}
rounds=${3:-1}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$here/crilogreceiver" && go build -o "$work/crilogbench" .)
"$work/crilogbench" gen -dir "$work/corpus" -files "$files" -lines "$lines" -partial 0.1
echo "corpus: $(cat "$work/corpus/manifest.json")"
# Read the corpus once so both receivers start from the page cache.
cat "$work"/corpus/*/*/*.log > /dev/null
for ((i = 1; i <= rounds; i++)); do
  for r in cri_log filelog; do
    "$work/crilogbench" run -dir "$work/corpus" -receiver "$r" | tee -a "$work/results.jsonl"
  done
done
python3 - "$work/results.jsonl" <<'PY'
import json, sys, statistics
runs = [json.loads(l) for l in open(sys.argv[1])]
def med(r, k): return statistics.median(x[k] for x in runs if x["receiver"] == r)
cri, fl = med("cri_log", "lines_per_cpu_s"), med("filelog", "lines_per_cpu_s")
rc, rf = med("cri_log", "peak_rss_mib"), med("filelog", "peak_rss_mib")
print(f"lines/CPU-s: cri_log {cri:,.0f}  filelog {fl:,.0f}  ratio {cri/fl:.1f}x")
print(f"peak RSS MiB: cri_log {rc:.1f}  filelog {rf:.1f}  ratio {rc/rf:.2f}")
PY
