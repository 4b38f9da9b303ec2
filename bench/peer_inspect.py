#!/usr/bin/env python3
"""Inspect AI's own reader as a peer: `inspect_ai.log.read_eval_log` on every `.eval` file
under a directory, samples included, as an analyst loading logs into Python would.

Counts samples, messages and tool calls so the reading is not optimised away, and prints
JSON with the seconds spent. Run with the Python of a venv that has `inspect_ai` installed.

Usage: peer_inspect.py DIR [--json OUT]
"""

import argparse
import glob
import json
import os
import sys
import time

from inspect_ai.log import read_eval_log


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--json")
    a = ap.parse_args()
    files = sorted(glob.glob(os.path.join(a.dir, "**", "*.eval"), recursive=True))
    t0 = time.perf_counter()
    samples = messages = tool_calls = scored = 0
    for f in files:
        log = read_eval_log(f)
        for s in log.samples or []:
            samples += 1
            messages += len(s.messages)
            tool_calls += sum(len(m.tool_calls or []) for m in s.messages if m.role == "assistant")
            scored += bool(s.scores)
    secs = time.perf_counter() - t0
    import inspect_ai

    out = {
        "reader": f"inspect_ai {inspect_ai.__version__} read_eval_log",
        "files": len(files),
        "bytes": sum(os.path.getsize(f) for f in files),
        "samples": samples,
        "messages": messages,
        "tool_calls": tool_calls,
        "scored": scored,
        "secs": secs,
    }
    text = json.dumps(out, indent=2)
    if a.json:
        with open(a.json, "w") as fh:
            fh.write(text + "\n")
    print(text)


if __name__ == "__main__":
    sys.exit(main())
