#!/bin/sh
# Runs the object_ref vs klog_parser benchmark COUNT times (default 10) and prints, per log
# format, the median of each reported metric. Run from this directory.
set -eu
count=${1:-10}
go test -run '^$' -bench 'ObjectRefVsKlogParser' -benchtime 100x -count "$count" . |
	awk '/^BenchmarkObjectRefVsKlogParser/ {
		name = $1; sub(/-[0-9]+$/, "", name); sub(/.*\//, "", name)
		for (i = 3; i < NF; i++) if ($(i+1) ~ /_%$|ns\/record$/) vals[name, $(i+1)] = vals[name, $(i+1)] " " $i
		names[name] = 1
	}
	END {
		split("parser_ns/record object_ref_ns/record object_ref_% object_ref_cpu_%", metrics, " ")
		for (n in names) {
			line = n ":"
			for (m = 1; m <= 4; m++) {
				k = split(vals[n, metrics[m]], v, " ")
				for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
				med = (k % 2) ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
				line = line sprintf("  median %s %.1f", metrics[m], med)
			}
			print line " (" k " runs)"
		}
	}'
