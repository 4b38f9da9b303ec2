#!/usr/bin/env python3
"""Before/after comparison of coroner binaries (one thread unless --threads), runs interleaved
so that load from other users falls on both alike. Reports the fastest wall and CPU time of
each.

Usage: ab.py [--runs N] [--threads T] [--cmd classify|ingest] [--stdout] [--arg=X]... BIN... -- PATH...
e.g.   bench/ab.py target/bench-bin/coroner-0-base target/release/coroner -- target/bench-corpus/harbor
"""

import argparse
import os
import resource
import subprocess
import sys
import time


def run(binary, cmd, args, paths, threads, stdout=False):
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    # --stdout: records go to stdout (to /dev/null), the path `coroner ingest RUN > out.jsonl` takes.
    out = [] if stdout else ["-o", "/dev/null"]
    p = subprocess.run([binary, cmd, "-q", *paths, *out, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in (0, 3):
        sys.exit(f"{binary} failed: {p.stderr.decode()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        sys.exit(__doc__)
    cut = argv.index("--")
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cmd", default="classify")
    ap.add_argument("--arg", action="append", default=[])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--stdout", action="store_true", help="write records to stdout instead of -o /dev/null")
    ap.add_argument("bins", nargs="+")
    a = ap.parse_args(argv[:cut])
    paths = argv[cut + 1 :]
    size = 0
    for p in paths:
        for d, _, files in os.walk(p):
            size += sum(os.path.getsize(os.path.join(d, f)) for f in files)
        if os.path.isfile(p):
            size += os.path.getsize(p)
    res = {b: [] for b in a.bins}
    for _ in range(a.runs):
        for b in a.bins:
            res[b].append(run(b, a.cmd, a.arg, paths, a.threads, a.stdout))
    base = None
    for b in a.bins:
        wall = min(w for w, _ in res[b])
        cpu = min(c for _, c in res[b])
        base = base or cpu
        print(f"{b:<45} wall {wall:7.2f} s  cpu {cpu:7.2f} s  {size / 1e6 / cpu:7.1f} MB/s per CPU-second  x{base / cpu:.2f} (CPU)  {size / 1e6 / wall:7.1f} MB/s wall")


if __name__ == "__main__":
    main()
