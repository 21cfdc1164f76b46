#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Start a collector, read its /proc/<pid>/status at the given seconds after start, and print
VmRSS, RssAnon and RssFile (MiB) and the CPU-seconds it has used (user + system) at each; then
stop it with SIGTERM. The environment is passed through (GOGC, for one). Run each collector
alone on a quiet machine, several times.

Usage: measure.py "1,5,15" <binary> <args...>
"""
import os
import signal
import subprocess
import sys
import time


def status(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile"):
                out[key] = int(value.split()[0]) / 1024
    return out


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    times = [float(t) for t in sys.argv[1].split(",")]
    proc = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    start = time.monotonic()
    try:
        for t in times:
            time.sleep(max(0, start + t - time.monotonic()))
            if proc.poll() is not None:
                sys.exit(f"{sys.argv[2]} exited with {proc.returncode}")
            s = status(proc.pid)
            cpu = cpu_seconds(proc.pid)
            print(f"{os.path.basename(sys.argv[2])} {t:g}s: VmRSS {s['VmRSS']:.1f} RssAnon {s['RssAnon']:.1f} RssFile {s['RssFile']:.1f} CPU {cpu:.2f}s")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait()


if __name__ == "__main__":
    main()
