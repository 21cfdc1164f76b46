#!/usr/bin/env bash
# Side-by-side benchmark: kube_events vs contrib's k8s_events receiver (v0.139.0), each in its own
# process, watching the same local API server (bin/kube-local) at the same time, one run.
# Usage: testbed/bench/k8sevents.sh [events] [objects] [driver flags...]
# kube_events runs with the Go runtime settings of the shipped events Deployment (GOMAXPROCS,
# GOGC, GOMEMLIMIT); pass -upstream-env GOMAXPROCS=1,GOGC=200,GOMEMLIMIT=204MiB to run contrib's
# with the same.
# Prints a Markdown table (kube_events, k8s_events, ratio); the driver's progress goes to stderr.
set -euo pipefail
events=${1:-100000}
objects=${2:-1000}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GONOSUMDB=github.com/open-telemetry/opentelemetry-collector-contrib
[[ -x "$root/bin/kube-local" ]] || make -C "$root" kube-bin
(cd "$here/k8sevents" && go build -o "$work/ours" . && go build -o "$work/driver" ./driver)
(cd "$here/k8sevents-upstream" && go build -o "$work/upstream" .)
"$work/driver" -kube-bin "$root/bin/kube-local" -ours "$work/ours" -upstream "$work/upstream" \
  -events "$events" -objects "$objects" -json "$work/results.json" \
  -ours-env-from "$root/deploy/kubernetes/events-deployment.yaml" "${@:3}"
