#!/usr/bin/env python3
"""The analysis people write by hand, as a peer for coroner's benchmark.

Walks a corpus made by `coroner gen-corpus`, `json.load`s every transcript (mini-swe-agent
`.traj.json`, Harbor trial `result.json` + `agent/trajectory.json`, Inspect `.eval` members,
Claude Code session JSONL), joins the verdict files, and counts what a notebook would:
steps, tool calls, tool errors, and a failure class per failed run from a few heuristics
(exit status, exception type, "Unknown tool" rejections, format errors without edits,
give-up phrases, otherwise worked-then-wrong). One thread, standard library only.

With --json-only it only loads every document (no counting): Python's own parse floor.

Usage: peer_handwritten.py CORPUS_DIR [--formats a,b] [--json OUT] [--json-only]
"""

import argparse
import collections
import csv
import glob
import json
import os
import re
import sys
import time
import zipfile

EDIT = re.compile(r"\bsed -i\b|>\s*\S+|\bmv\b|\btee\b|\bpatch\b|\bgit apply\b")
TEST = re.compile(r"\bpytest\b|\bpython -m pytest\b|\bunittest\b|\bcargo test\b|\bnpm test\b")
GIVE_UP = re.compile(r"(?i)\b(unable to|cannot|can't|give up|giving up)\b")
UNKNOWN = re.compile(r"(?i)unknown tool|no such tool|tool \S+ not found")
BASH_BLOCK = re.compile(r"```(?:bash|mswea_bash_command)\s*\n(.*?)\n```", re.S)
RETURNCODE = re.compile(r"<returncode>(-?\d+)</returncode>")
INFRA = re.compile(r"(?i)retryerror|ratelimit|docker|container|overloaded|api error|runtimeerror")


class Tally:
    def __init__(self):
        self.trajectories = 0
        self.steps = 0
        self.tool_calls = 0
        self.tool_errors = 0
        self.outcomes = collections.Counter()
        self.classes = collections.Counter()

    def add(self, steps, calls, errors, outcome, cls):
        self.trajectories += 1
        self.steps += steps
        self.tool_calls += calls
        self.tool_errors += errors
        self.outcomes[outcome] += 1
        if outcome in ("failed", "errored"):
            self.classes[cls] += 1

    def as_dict(self):
        return {
            "trajectories": self.trajectories,
            "steps": self.steps,
            "tool_calls": self.tool_calls,
            "tool_errors": self.tool_errors,
            "outcomes": dict(sorted(self.outcomes.items())),
            "classes": dict(sorted(self.classes.items())),
        }


def classify(status, unknown, format_errors, edits, final_text, infra_hint=""):
    """The heuristics, in the order an analyst would check them."""
    if status in ("LimitsExceeded", "AgentTimeoutError", "limit", "max_turns"):
        return "budget_exhausted"
    if status in ("RetryError", "RuntimeError", "error") or INFRA.search(infra_hint or ""):
        return "infrastructure"
    if unknown:
        return "hallucinated_tool"
    if format_errors and not edits:
        return "plan_without_execution"
    if GIVE_UP.search(final_text or ""):
        return "early_resignation"
    if not edits:
        return "plan_without_execution" if "```diff" in (final_text or "") else "early_resignation"
    return "worked_then_wrong"


def mini(root, tally):
    for run in sorted(glob.glob(os.path.join(root, "run-*"))):
        resolved, failed = set(), set()
        for report in glob.glob(os.path.join(run, "*.run-*.json")):
            r = json.load(open(report))
            resolved.update(r.get("resolved_ids", []))
            failed.update(r.get("unresolved_ids", []) + r.get("empty_patch_ids", []))
        for report in glob.glob(os.path.join(run, "logs", "*", "report.json")):
            for iid, r in json.load(open(report)).items():
                (resolved if r.get("resolved") else failed).add(iid)
        for path in sorted(glob.glob(os.path.join(run, "trajs", "*", "*.traj.json"))):
            doc = json.load(open(path))
            iid = doc.get("instance_id") or os.path.basename(path)[: -len(".traj.json")]
            status = doc.get("info", {}).get("exit_status", "")
            steps = calls = errors = format_errors = edits = unknown = 0
            final_text = ""
            for m in doc["messages"]:
                steps += 1
                role = m.get("role")
                content = m.get("content") if isinstance(m.get("content"), str) else json.dumps(m.get("content"))
                extra = m.get("extra") or {}
                if role == "assistant":
                    final_text = content
                    commands = [c["function"]["arguments"] for c in (m.get("tool_calls") or [])]
                    if not commands:
                        commands = BASH_BLOCK.findall(content or "")
                    calls += len(commands)
                    edits += sum(1 for c in commands if EDIT.search(c))
                elif role == "tool" or RETURNCODE.search(content or ""):
                    code = extra.get("returncode")
                    if code is None:
                        rc = RETURNCODE.search(content or "")
                        code = int(rc.group(1)) if rc else 0
                    errors += code != 0
                elif extra.get("interrupt_type") == "FormatError" or "EXACTLY ONE action" in (content or ""):
                    format_errors += 1
                    if UNKNOWN.search(content or ""):
                        unknown += 1
            outcome = "passed" if iid in resolved else "failed" if iid in failed else "unknown"
            tally.add(steps, calls, errors, outcome, classify(status, unknown, format_errors, edits, final_text))


def harbor(root, tally):
    for result in sorted(glob.glob(os.path.join(root, "*", "*", "result.json"))):
        trial = json.load(open(result))
        if "trial_name" not in trial:
            continue
        exc = (trial.get("exception_info") or {}).get("exception_type", "")
        rewards = (trial.get("verifier_result") or {}).get("rewards") or {}
        reward = rewards.get("reward")
        outcome = "errored" if reward is None else "passed" if reward >= 1 else "failed"
        steps = calls = errors = edits = unknown = format_errors = 0
        final_text = ""
        traj = os.path.join(os.path.dirname(result), "agent", "trajectory.json")
        if os.path.exists(traj):
            for s in json.load(open(traj))["steps"]:
                steps += 1
                if s.get("source") != "agent":
                    continue
                final_text = s.get("message") or ""
                tcs = s.get("tool_calls") or []
                calls += len(tcs)
                if not tcs and "```diff" in final_text:
                    format_errors += 1
                for c in tcs:
                    edits += bool(EDIT.search(json.dumps(c.get("arguments"))))
                for r in (s.get("observation") or {}).get("results", []):
                    text = r.get("content") if isinstance(r.get("content"), str) else json.dumps(r.get("content"))
                    if UNKNOWN.search(text or ""):
                        unknown += 1
                        errors += 1
                    elif re.search(r"\b\d+ failed\b|Traceback", text or ""):
                        errors += 1
        status = exc or ("error" if outcome == "errored" else "")
        cls = classify(status, unknown, format_errors, edits, final_text, exc)
        tally.add(steps, calls, errors, outcome, cls)


def inspect(root, tally):
    for path in sorted(glob.glob(os.path.join(root, "**", "*.eval"), recursive=True)):
        with zipfile.ZipFile(path) as z:
            for name in z.namelist():
                if not (name.startswith("samples/") and name.endswith(".json")):
                    continue
                s = json.loads(z.read(name))
                steps = len(s["messages"])
                calls = errors = edits = unknown = format_errors = 0
                final_text = ""
                for m in s["messages"]:
                    if m["role"] == "assistant":
                        final_text = m["content"] if isinstance(m["content"], str) else ""
                        tcs = m.get("tool_calls") or []
                        calls += len(tcs)
                        if not tcs:
                            format_errors += 1
                        edits += sum(1 for c in tcs if EDIT.search(json.dumps(c.get("arguments"))))
                    elif m["role"] == "tool" and m.get("error"):
                        errors += 1
                        unknown += bool(UNKNOWN.search(m["error"].get("message", "")))
                score = next(iter((s.get("scores") or {}).values()), None)
                value = score.get("value") if score else None
                outcome = "unknown" if value is None else "passed" if value in (1, 1.0, "C") else "failed"
                status = "limit" if s.get("limit") else "error" if s.get("error") else ""
                tally.add(steps, calls, errors, outcome, classify(status, unknown, format_errors, edits, final_text))


def claude(root, tally):
    verdicts = {}
    for f in glob.glob(os.path.join(root, "**", "verdicts.csv"), recursive=True):
        for row in csv.DictReader(open(f)):
            verdicts[row["session_id"]] = row["outcome"]
    for path in sorted(glob.glob(os.path.join(root, "**", "*.jsonl"), recursive=True)):
        steps = calls = errors = edits = unknown = 0
        final_text = ""
        api_error = ""
        session = os.path.basename(path)[: -len(".jsonl")]
        for line in open(path):
            if not line.strip():
                continue
            e = json.loads(line)
            msg = e.get("message") or {}
            content = msg.get("content")
            if e.get("isApiErrorMessage"):
                api_error = json.dumps(content)
            if not isinstance(content, list):
                steps += 1
                continue
            for block in content:
                steps += 1
                kind = block.get("type")
                if kind == "text" and e.get("type") == "assistant":
                    final_text = block.get("text", "")
                elif kind == "tool_use":
                    calls += 1
                    edits += block.get("name") in ("Edit", "Write", "MultiEdit") or bool(EDIT.search(json.dumps(block.get("input"))))
                elif kind == "tool_result" and block.get("is_error"):
                    errors += 1
                    unknown += bool(UNKNOWN.search(json.dumps(block.get("content"))))
        outcome = verdicts.get(session, "unknown")
        status = "error" if api_error else ""
        tally.add(steps, calls, errors, outcome, classify(status, unknown, 0, edits, final_text, api_error))


READERS = {"mini-v1": mini, "mini-v2": mini, "harbor": harbor, "inspect": inspect, "claude-code": claude}


def json_only(root, tally):
    """Loads every JSON document under root and nothing else."""
    for d, _, files in os.walk(root):
        for f in sorted(files):
            p = os.path.join(d, f)
            if f.endswith(".json"):
                with open(p, "rb") as fh:
                    json.load(fh)
                tally.trajectories += 1
            elif f.endswith(".jsonl"):
                with open(p, "rb") as fh:
                    for line in fh:
                        if line.strip():
                            json.loads(line)
                tally.trajectories += 1
            elif f.endswith(".eval"):
                with zipfile.ZipFile(p) as z:
                    for m in z.namelist():
                        if m.endswith(".json"):
                            json.loads(z.read(m))
                tally.trajectories += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("--formats", default=",".join(READERS))
    ap.add_argument("--json")
    ap.add_argument("--json-only", action="store_true")
    a = ap.parse_args()
    t0 = time.perf_counter()
    per = {}
    for f in a.formats.split(","):
        d = os.path.join(a.corpus, f)
        if not os.path.isdir(d):
            continue
        tally = Tally()
        t = time.perf_counter()
        (json_only if a.json_only else READERS[f])(d, tally)
        per[f] = tally.as_dict()
        per[f]["secs"] = time.perf_counter() - t
    secs = time.perf_counter() - t0
    out = {"secs": secs, "formats": per, "trajectories": sum(p["trajectories"] for p in per.values())}
    text = json.dumps(out, indent=2)
    if a.json:
        with open(a.json, "w") as fh:
            fh.write(text + "\n")
    print(text)


if __name__ == "__main__":
    sys.exit(main())
