#!/usr/bin/env python3
"""Chooses the failed trajectories of the accuracy suite from pinned public runs.

Reads each source repository at its pinned commit (a local mirror, `git -C MIRROR/<owner+name>/repo`),
lists the runs that have a real verdict from the same source and failed, and draws a seeded,
stratified sample per source. Writes accuracy/candidates.csv: one row per trajectory to label,
with the paths fetch.sh must materialize for it. Run once; the labels are written by reading.

  python3 accuracy/choose.py --mirror /work/.mirror

A second wave (`--wave 2`) appends to candidates.csv without touching the first: more
mini-swe-agent SWE-bench failures (the first wave's 30 gave only 3 `regressed` and 12
`unverified` labels, too few to measure a flag) and a SWE-bench run of another harness
(Vorflux), drawn with the same seeded, stratified sampler from what the first wave left.

  python3 accuracy/choose.py --mirror /work/.mirror --wave 2
"""
import argparse
import csv
import json
import random
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

SEED = 17

# source name -> (repository, pinned commit)
SOURCES = {
    "mini-swebench": ("gruckion/mini-swe-agent", "d12a71af"),
    "tb-leaderboard": ("laude-institute/terminal-bench-leaderboard", "8e1925a3"),
    "harbor-jobs": ("refreshdotdev/harbor-trajectories", "22dafa6"),
    "agentrx": ("microsoft/AgentRx", "f228165b"),
    "vorflux-swebench": ("piyushhhxyz/vorflux-swe-benchmarks", "9e2acad9"),
}


def git(mirror, repo, *args):
    d = Path(mirror) / repo.replace("/", "+") / "repo"
    return subprocess.run(["git", "-C", str(d), *args], check=True, capture_output=True).stdout


def ls(mirror, repo, commit, prefix):
    out = git(mirror, repo, "ls-tree", "-r", "--name-only", commit, "--", prefix)
    return [l for l in out.decode().splitlines() if l]


def show(mirror, repo, commit, path):
    return git(mirror, repo, "show", f"{commit}:{path}")


def sample(rows, n, key, seed=SEED):
    """Seeded, stratified by `key`: round-robin over strata so every stratum is represented."""
    rng = random.Random(seed)
    strata = defaultdict(list)
    for r in rows:
        strata[key(r)].append(r)
    for v in strata.values():
        rng.shuffle(v)
    order = sorted(strata)
    rng.shuffle(order)
    out = []
    while len(out) < n and any(strata[k] for k in order):
        for k in order:
            if strata[k] and len(out) < n:
                out.append(strata[k].pop())
    return out


def mini_swebench(m, n=30, skip=(), seed=SEED):
    repo, commit = SOURCES["mini-swebench"]
    base = "swebench_results/20251118_gemini-3-pro-74pct"
    failed = []
    for p in ls(m, repo, commit, f"{base}/logs"):
        if p.endswith("/report.json"):
            rep = json.loads(show(m, repo, commit, p))
            if not rep.get("resolved", False):
                failed.append(p.split("/")[-2])
    rows = [
        dict(source="mini-swebench", family="mini-swe-agent/swe-bench", task_id=i, trial="",
             path=f"{base}/trajs/{i}/{i}.traj.json", fetch=f"{base}/trajs/{i};{base}/logs/{i}")
        for i in failed if i not in skip
    ]
    return sample(rows, n, key=lambda r: r["task_id"].split("__")[0], seed=seed)


def vorflux_swebench(m, n):
    """Vorflux (Claude Opus coding, GPT reviewing) on SWE-bench Verified: one span file per
    instance and the official `results.json`; a failure is an instance not in `resolved` whose
    trace holds entries (some instances were never exported)."""
    repo, commit = SOURCES["vorflux-swebench"]
    base = "evaluation/verified/20250519_vorflux_opus46-code_gpt55h-review"
    resolved = set(json.loads(show(m, repo, commit, f"{base}/results/results.json"))["resolved"])
    rows = []
    for p in ls(m, repo, commit, f"{base}/trajs"):
        i = p.rsplit("/", 1)[-1].removesuffix(".json")
        if not p.endswith(".json") or i in resolved:
            continue
        if not json.loads(show(m, repo, commit, p)).get("trajectory"):
            continue
        rows.append(dict(source="vorflux-swebench", family="vorflux/swe-bench", task_id=i, trial="", path=p,
                         fetch=f"{p};{base}/patches/{i}.diff;{base}/results/results.json"))
    return sample(rows, n, key=lambda r: r["task_id"].split("__")[0])


def tb_leaderboard(m):
    repo, commit = SOURCES["tb-leaderboard"]
    picks = [
        ("20250711_openhands_claude-4-sonnet", "openhands/terminal-bench", 20),
        ("20250825_swe-agent-mini_claude-4-sonnet", "mini-swe-agent/terminal-bench-capture", 15),
        ("20250924_droid_gpt-5", "installed-cli/terminal-bench", 5),
        ("20250811_cursor-cli_claude-4-sonnet", "installed-cli/terminal-bench", 5),
        ("20250902_orchestrator_qwen-3-coder-480B", "installed-cli/terminal-bench", 5),
        ("20250902_orchestrator_claude-4-sonnet", "installed-cli/terminal-bench", 5),
    ]
    out = []
    for run, family, n in picks:
        base = f"results/terminal-bench-core@0.1.1/{run}"
        files = ls(m, repo, commit, base)
        rows = []
        for p in files:
            parts = p.split("/")
            if not p.endswith("/results.json") or "-of-" not in parts[-2]:
                continue
            r = json.loads(show(m, repo, commit, p))
            if r.get("is_resolved") is True:
                continue
            trial_dir = "/".join(parts[:-1])
            # The trial's own run: its run_metadata.json names the agent and the model.
            run = "/".join(parts[:-3])
            meta = [f for f in files if f == f"{run}/run_metadata.json"]
            rows.append(dict(source="tb-leaderboard", family=family, task_id=r.get("task_id", ""), trial="",
                             path=p, fetch=";".join([trial_dir] + meta),
                             mode=r.get("failure_mode", "")))
        out += sample(rows, n, key=lambda r: r.get("mode", ""))
    for r in out:
        r.pop("mode", None)
    return out


def harbor_jobs(m):
    repo, commit = SOURCES["harbor-jobs"]
    files = ls(m, repo, commit, "jobs")
    rows_t, rows_m = [], []
    for p in files:
        parts = p.split("/")
        if len(parts) != 4 or parts[-1] != "result.json":
            continue
        r = json.loads(show(m, repo, commit, p))
        vr = r.get("verifier_result") or {}
        reward = (vr.get("rewards") or {}).get("reward")
        exc = r.get("exception_info")
        if reward == 1.0 or (reward is None and exc is None):
            continue
        agent = ((r.get("agent_info") or {}).get("name")) or ""
        job = parts[1]
        jobfiles = [f for f in files if f.startswith(f"jobs/{job}/") and f.count("/") == 2]
        row = dict(source="harbor-jobs", family=f"{agent}/harbor", task_id=r.get("task_name", ""), trial="",
                   path=p, fetch=";".join(["/".join(parts[:-1])] + jobfiles), job=job,
                   exc=(exc or {}).get("exception_type", ""))
        (rows_m if agent == "mini-swe-agent" else rows_t).append(row)
    out = sample(rows_t, 25, key=lambda r: (r["job"], r["exc"])) + sample(rows_m, 12, key=lambda r: (r["job"], r["exc"]))
    for r in out:
        r.pop("job"), r.pop("exc")
    return out


def agentrx(m):
    repo, commit = SOURCES["agentrx"]
    full = json.loads(show(m, repo, commit, "data/tau_retail/tau_dataset_full.json"))
    tau = [dict(source="agentrx", family="tau-bench/retail", task_id=str(x["task_id"]), trial=str(x.get("trial", "")),
                path="data/tau_retail/tau_dataset_full.json", fetch="data/tau_retail/tau_dataset_full.json")
           for x in full if x.get("reward") == 0.0]
    gt = json.loads(show(m, repo, commit, "data/ground_truth/magentic_one_ground_truth.json"))
    mag = []
    have = set(ls(m, repo, commit, "data/magentic_dataset"))
    for g in gt:
        p = f"data/magentic_dataset/{g['trajectory_id']}.json"
        if p in have:
            mag.append(dict(source="agentrx", family="magentic-one/gaia", task_id=g["trajectory_id"], trial="",
                            path=p, fetch=p))
    return sample(tau, 22, key=lambda r: "tau") + sample(mag, 18, key=lambda r: "m")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirror", required=True)
    ap.add_argument("--out", default=str(Path(__file__).parent / "candidates.csv"))
    ap.add_argument("--wave", type=int, default=1)
    a = ap.parse_args()
    fields = ["n", "source", "family", "repo", "commit", "path", "task_id", "trial", "fetch"]
    if a.wave == 1:
        rows, first = mini_swebench(a.mirror) + tb_leaderboard(a.mirror) + harbor_jobs(a.mirror) + agentrx(a.mirror), 1
    else:
        have = list(csv.DictReader(open(a.out)))
        drawn = {r["task_id"] for r in have if r["source"] == "mini-swebench"}
        rows = mini_swebench(a.mirror, 20, skip=drawn, seed=SEED + 1) + vorflux_swebench(a.mirror, 16)
        first = len(have) + 1
    for i, r in enumerate(rows):
        r["n"] = first + i
        r["repo"], r["commit"] = SOURCES[r["source"]]
    with open(a.out, "w" if a.wave == 1 else "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        if a.wave == 1:
            w.writeheader()
        w.writerows(rows)
    fams = defaultdict(int)
    for r in rows:
        fams[r["family"]] += 1
    print(f"{len(rows)} trajectories", dict(fams), file=sys.stderr)


if __name__ == "__main__":
    main()
