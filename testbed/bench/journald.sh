#!/usr/bin/env bash
# Side-by-side benchmark: the journal receiver (pure Go, reads the files) vs contrib's journald
# receiver (runs journalctl), on the same journal file written by systemd-journal-remote
# (make journal-tools installs it and journalctl).
# Usage: testbed/bench/journald.sh [entries] [rounds]
# Prints one JSON line per receiver run and the median ratios (entries per CPU-second, peak RSS;
# journald's numbers include its journalctl).
set -euo pipefail
entries=${1:-400000}
rounds=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
remote=$(ls /usr/lib/systemd/systemd-journal-remote /lib/systemd/systemd-journal-remote 2>/dev/null | head -1)
[ -n "$remote" ] && command -v journalctl >/dev/null || { echo "run make journal-tools first" >&2; exit 1; }
(cd "$here/journald" && go build -o "$work/journaldbench" .)
"$work/journaldbench" gen -dir "$work/journal" -entries "$entries" -remote "$remote"
echo "journal: $(cat "$work/journal/manifest.json")"
# Read the files once so both receivers start from the page cache.
cat "$work"/journal/*/*.journal > /dev/null
for ((i = 1; i <= rounds; i++)); do
  for r in journal journald; do
    "$work/journaldbench" run -dir "$work/journal" -receiver "$r" | tee -a "$work/results.jsonl"
  done
done
python3 - "$work/results.jsonl" <<'PY'
import json, sys, statistics
runs = [json.loads(l) for l in open(sys.argv[1])]
def med(r, k): return statistics.median(x[k] for x in runs if x["receiver"] == r)
a, b = med("journal", "entries_per_cpu_s"), med("journald", "entries_per_cpu_s")
ra, rb = med("journal", "peak_rss_mib"), med("journald", "peak_rss_mib")
print(f"entries/CPU-s: journal {a:,.0f}  journald {b:,.0f}  ratio {a/b:.2f}x")
print(f"peak RSS MiB: journal {ra:.1f}  journald {rb:.1f} (journalctl included)  ratio {ra/rb:.2f}")
PY
