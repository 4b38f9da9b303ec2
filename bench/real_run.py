#!/usr/bin/env python3
"""coroner on a real run against Python's `json.load` of the same files, CPU seconds on one
thread: the comparison a user makes before reaching for coroner instead of a script.

The run is mini-swe-agent 1.15 + Gemini 3 Pro on SWE-bench Verified, 500 trajectories, as its
authors published it (`bench/run.sh` fetches it from a pinned commit). coroner reads the whole
run directory (trajectories, the per-instance `report.json` verdicts, the batch's exit-status
files); Python loads every `.json` file in it, which is the same set of JSON bytes, and does
nothing else. Each figure is the lowest of PASSES runs (CPU time, user + system, of the child
process), page cache warm.

Usage: real_run.py --coroner BIN --run DIR --out FILE [--passes N]
"""

import argparse
import json
import os
import subprocess
import sys
import time

from suite import timed  # /usr/bin/time -v of one run, as the rest of the suite measures

# Python's own floor: the loads and the walk, in a child process like coroner's.
PY_LOAD = r"""
import json, os, sys
n = 0
for root, dirs, files in os.walk(sys.argv[1]):
    dirs.sort()
    for f in sorted(files):
        if f.endswith(".json"):
            with open(os.path.join(root, f), "rb") as h:
                json.load(h)
            n += 1
print(n)
"""


def lowest(cmd, passes, env=None):
    """The run with the least CPU time (user + system) of `passes`, timed as the suite times."""
    runs = []
    for _ in range(passes):
        r, out = timed(cmd, env)
        if r["exit"] not in (0, 3):
            sys.exit(f"failed ({r['exit']}): {r['cmd']}\n{r['stderr_tail']}")
        runs.append(dict(r, cpu=r["user"] + r["sys"], stdout=out[-500:]))
    best = min(runs, key=lambda r: r["cpu"])
    return {k: best[k] for k in ["cmd", "cpu", "wall", "max_rss_kb", "stdout", "stderr_tail"]} | {"all_cpu": [r["cpu"] for r in runs]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--coroner", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--source", default="")
    a = ap.parse_args()

    json_files = json_bytes = traj = 0
    for root, _, files in os.walk(a.run):
        for f in files:
            if f.endswith(".json"):
                json_files += 1
                json_bytes += os.path.getsize(os.path.join(root, f))
            if f.endswith(".traj.json"):
                traj += 1
    # Warm the page cache, so every reader starts from the same state.
    timed([sys.executable, "-c", PY_LOAD, a.run])

    one = {"RAYON_NUM_THREADS": "1"}
    res = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip(),
        "source": a.source,
        "run": a.run,
        "trajectories": traj,
        "json_files": json_files,
        "json_bytes": json_bytes,
        "passes": a.passes,
        "python_json_load": lowest([sys.executable, "-c", PY_LOAD, a.run], a.passes),
        "classify": lowest([a.coroner, "classify", "-q", a.run, "-o", "/dev/null"], a.passes, one),
        "ingest": lowest([a.coroner, "ingest", "-q", a.run, "-o", "/dev/null"], a.passes, one),
        "classify_2_threads": lowest([a.coroner, "classify", "-q", a.run, "-o", "/dev/null"], a.passes, {"RAYON_NUM_THREADS": "2"}),
    }
    for k in ["classify", "ingest"]:
        res[k]["x_python"] = res[k]["cpu"] / res["python_json_load"]["cpu"]
    with open(a.out, "w") as fh:
        json.dump(res, fh, indent=2)
    py = res["python_json_load"]["cpu"]
    print(
        f"real run: {traj} trajectories, {json_bytes / 1e6:.0f} MB of JSON; CPU s (lowest of {a.passes}): "
        f"python json.load {py:.2f}, coroner classify {res['classify']['cpu']:.2f} ({res['classify']['x_python']:.2f}x), "
        f"ingest {res['ingest']['cpu']:.2f} ({res['ingest']['x_python']:.2f}x)",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
