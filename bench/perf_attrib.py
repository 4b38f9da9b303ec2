#!/usr/bin/env python3
"""Attributes the samples of a `perf record --call-graph dwarf` profile of coroner to its own
functions: each sample goes to the innermost `coroner::` frame on its stack (the function of
ours that was running, itself or through a library), and to a pipeline stage by that
function's module. Prints JSON: samples per stage, per coroner function, and per leaf symbol
within each stage.

Usage: perf_attrib.py PERF.DATA [--top N]
"""

import argparse
import collections
import json
import re
import subprocess
import sys

# First match wins; patterns are matched against the innermost coroner frame.
STAGES = [
    (r"coroner::ingest::probe::", "detect: probe the first 64 KB of every file"),
    (r"coroner::ingest::detect::", "detect: sniff adapters"),
    (r"SHA:coroner::ingest::source::Source::from_bytes", "read: sha256 of every inflated .eval member (provenance)"),
    (r"SHA:coroner::ingest::adapters::inspect::sha256_file", "read: sha256 of .eval archives (provenance)"),
    (r"SHA:", "read: sha256 of every file (provenance)"),
    (r"coroner::ingest::source::", "read: load files"),
    (r"coroner::ingest::walk::", "walk the inputs"),
    (r"coroner::ingest::adapters::mini_swe_agent", "parse: mini-swe-agent"),
    (r"coroner::ingest::adapters::(harbor|atif)", "parse: Harbor + ATIF"),
    (r"coroner::ingest::adapters::(claude_code|lines|chat_anthropic|chat_api)", "parse: Claude Code"),
    (r"coroner::ingest::adapters::inspect", "parse: Inspect .eval"),
    (r"coroner::ingest::adapters::", "parse: other adapters"),
    (r"coroner::ingest::outcomes::|coroner::ingest::join", "outcome files and joins"),
    (r"coroner::model::pairing", "pair calls and results"),
    (r"coroner::ingest::pipeline::", "pipeline: finalize records"),
    (r"coroner::ingest::writer", "write JSONL"),
    (r"coroner::classify::shell", "classify: shell commands (tree-sitter)"),
    (r"coroner::classify::actions", "classify: actions (phrase scans of outputs)"),
    (r"coroner::classify::", "classify: rules and mechanics"),
    (r"coroner::cli::", "cli: collect and write verdicts"),
]


def stage_of(frame):
    for pat, name in STAGES:
        if re.search(pat, frame):
            return name
    return "other coroner code"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--top", type=int, default=25)
    a = ap.parse_args()
    p = subprocess.run(
        ["perf", "script", "-i", a.data, "-F", "ip,sym", "--no-inline"],
        capture_output=True,
        text=True,
        errors="replace",
    )
    samples = []
    cur = []
    for line in p.stdout.splitlines():
        if not line.strip():
            if cur:
                samples.append(cur)
            cur = []
            continue
        parts = line.strip().split(None, 1)
        cur.append(parts[1] if len(parts) > 1 else "[unknown]")
    if cur:
        samples.append(cur)
    total = len(samples)
    by_stage = collections.Counter()
    by_func = collections.Counter()
    leaf_in_stage = collections.defaultdict(collections.Counter)
    for stack in samples:
        leaf = re.sub(r"\+0x[0-9a-f]+$", "", stack[0]) if stack else "[unknown]"
        frames = [re.sub(r"\+0x[0-9a-f]+$", "", f) for f in stack]
        ours_all = [f for f in frames if f.startswith("coroner::") or f.startswith("<coroner::")]
        ours = ours_all[0] if ours_all else None
        if "sha2::" in leaf:
            # Hashing is charged to what hashed: a file read, an inflated member, an archive.
            caller = next((f for f in ours_all if "sha256_hex" not in f), "")
            ours = "SHA:" + caller
        stage = stage_of(ours) if ours else ("kernel / runtime" if leaf.startswith("[") or "k]" in leaf else "outside coroner frames")
        by_stage[stage] += 1
        if ours:
            by_func["sha2 (hashing) under " + ours[4:] if ours.startswith("SHA:") else ours] += 1
        leaf_in_stage[stage][leaf] += 1
    pct = lambda n: round(100.0 * n / max(total, 1), 1)
    out = {
        "samples": total,
        "stages": [{"stage": s, "pct": pct(n), "top_leaves": [{"symbol": l, "pct": pct(m)} for l, m in leaf_in_stage[s].most_common(4)]} for s, n in by_stage.most_common()],
        "functions": [{"function": f, "pct": pct(n)} for f, n in by_func.most_common(a.top)],
    }
    json.dump(out, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
