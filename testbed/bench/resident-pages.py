#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Which parts of a running Go binary are resident: the binary's mapped pages that are in
memory (/proc/<pid>/pagemap, present bit), attributed to the symbols they hold (go tool nm
-size of the same, unstripped build) and summed by package group and mapping permission.
Pages of the function tables (.gopclntab) and unnamed read-only data have no symbol and are
reported as such.

Usage (Linux, as a user allowed to read the process's pagemap):
  cd cmd/otelcol-k8s-node && CGO_ENABLED=0 go build -trimpath -o /tmp/node-syms .
  go tool nm -size /tmp/node-syms > /tmp/node-nm.txt
  python3 testbed/bench/resident-pages.py /tmp/node-syms /tmp/node-nm.txt 85 &
  bin/benche2e -node-bin /tmp/node-syms -only otelcol-k8s-node -idle 1000 -idle-for 60s
The third argument is how long to wait after the process appears (85 s: idle in that run).
"""
import bisect
import collections
import struct
import subprocess
import sys
import time

PAGE = 4096


def group(name):
    if name.startswith("runtime."):
        return "runtime"
    if name.startswith(("go:", "type:")):
        return name.split(".")[0]
    base = name[: name.find("(")] if "(" in name else name
    dot = base.find(".", base.rfind("/") + 1)
    pkg = base[:dot] if dot >= 0 else base
    c = pkg.split("/")
    if c[0] in ("k8s.io", "sigs.k8s.io") or "gnostic" in pkg or "kube-openapi" in pkg:
        return "kubernetes client (k8s.io, sigs.k8s.io, gnostic)"
    if "aws-sdk-go" in pkg or "smithy-go" in pkg:
        return "AWS SDK"
    if c[0] == "go.opentelemetry.io":
        return "/".join(c[:2])
    if c[0] == "github.com" and len(c) > 2 and c[1] in ("open-telemetry", "otelcol-k8s"):
        return "/".join(c[:3])
    if "." in c[0]:
        return "/".join(c[:3])
    return "standard library"


def main():
    binpath, nm, wait = sys.argv[1], sys.argv[2], float(sys.argv[3])
    syms, pclntab = [], [0, 0]
    for line in open(nm):
        p = line.split()
        if len(p) < 4 or p[2] in "Bb":
            continue
        addr, size, name = int(p[0], 16), int(p[1]), " ".join(p[3:])
        if name == "runtime.pclntab":
            pclntab[0] = addr
        elif name == "runtime.epclntab":
            pclntab[1] = addr
        syms.append((addr, size, name))
    syms.sort()
    addrs = [s[0] for s in syms]
    pid = None
    for _ in range(600):
        out = subprocess.run(["pgrep", "-f", "^" + binpath], capture_output=True, text=True).stdout.split()
        if out:
            pid = int(out[0])
            break
        time.sleep(0.5)
    if pid is None:
        sys.exit("no process runs " + binpath)
    time.sleep(wait)
    maps = []
    for line in open(f"/proc/{pid}/maps"):
        p = line.split()
        if len(p) >= 6 and p[5] == binpath:
            lo, hi = (int(x, 16) for x in p[0].split("-"))
            maps.append((lo, hi, p[1]))
    agg, total = collections.Counter(), 0
    with open(f"/proc/{pid}/pagemap", "rb") as pm:
        for lo, hi, perm in maps:
            n = (hi - lo) // PAGE
            pm.seek(lo // PAGE * 8)
            data = pm.read(n * 8)
            for i in range(n):
                v = struct.unpack_from("<Q", data, i * 8)[0]
                if not (v >> 63) & 1 or not (v >> 61) & 1:  # not present, or not a file page
                    continue
                total += PAGE
                a = lo + i * PAGE
                j, found = max(bisect.bisect_right(addrs, a) - 1, 0), False
                while j < len(syms) and syms[j][0] < a + PAGE:
                    s = syms[j]
                    overlap = min(s[0] + s[1], a + PAGE) - max(s[0], a)
                    if overlap > 0:
                        agg[(perm, group(s[2]))] += overlap
                        found = True
                    j += 1
                if not found:
                    what = "function tables (.gopclntab)" if pclntab[0] <= a < pclntab[1] else "no symbol"
                    agg[(perm, what)] += PAGE
    print(f"pid {pid}: {total / 2**20:.1f} MiB of {binpath} resident")
    for (perm, g), v in agg.most_common(30):
        print(f"{v / 2**20:7.2f} MiB  {perm}  {g}")


if __name__ == "__main__":
    main()
