#!/usr/bin/env python3
"""Runs the measurements of coroner's benchmark suite and writes BENCHMARKS.md.

Called by bench/run.sh after it has built the release binaries, generated the corpus and set
up the Inspect venv; see that script for the one command. Every timed command runs under
`/usr/bin/time -v` (wall clock, CPU, peak RSS); the load average is recorded before and after
each. Raw results go to OUT/results.json, the report to BENCHMARKS.md.

Usage: suite.py --corpus DIR --out DIR --coroner BIN --floor BIN --venv-python PY
                [--passes N] [--inspect-subset BYTES] [--profile] [--only-report]
"""

import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import time
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FORMATS = ["mini-v1", "mini-v2", "harbor", "inspect", "claude-code"]


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def loadavg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


def timed(cmd, env=None, stdout=None):
    """Runs cmd under /usr/bin/time -v; returns wall, user, sys, max RSS and the load."""
    before = loadavg()
    e = dict(os.environ)
    e.update(env or {})
    tfile = "/tmp/coroner-bench-time.txt"
    full = ["/usr/bin/time", "-v", "-o", tfile] + cmd
    out = subprocess.run(full, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    after = loadavg()
    t = open(tfile).read()

    def field(name):
        m = re.search(re.escape(name) + r":\s*(.+)", t)
        return m.group(1).strip() if m else ""

    wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)")
    parts = [float(p) for p in wall.split(":")]
    secs = parts[-1] + 60 * parts[-2] + (3600 * parts[-3] if len(parts) > 2 else 0)
    r = {
        "cmd": " ".join(cmd),
        "env": env or {},
        "wall": secs,
        "user": float(field("User time (seconds)") or 0),
        "sys": float(field("System time (seconds)") or 0),
        "max_rss_kb": int(field("Maximum resident set size (kbytes)") or 0),
        "exit": out.returncode,
        "load_before": before,
        "load_after": after,
        "stderr_tail": out.stderr[-2000:],
    }
    if stdout is not None:
        with open(stdout, "w") as fh:
            fh.write(out.stdout)
    if out.returncode not in (0, 3):
        log(f"FAILED ({out.returncode}): {r['cmd']}\n{out.stderr[-3000:]}")
    return r, out.stdout


def best(cmd, passes, env=None):
    """The fastest of `passes` runs (peak RSS of that run; all runs kept)."""
    runs = [timed(cmd, env)[0] for _ in range(passes)]
    b = min(runs, key=lambda r: r["wall"])
    b = dict(b)
    b["all_walls"] = [r["wall"] for r in runs]
    b["max_rss_kb_all"] = max(r["max_rss_kb"] for r in runs)
    return b


def du(path):
    total = 0
    for d, _, files in os.walk(path):
        for f in files:
            total += os.path.getsize(os.path.join(d, f))
    return total


def machine():
    cpu = ""
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem = 0
    for line in open("/proc/meminfo"):
        if line.startswith("MemTotal"):
            mem = int(line.split()[1]) * 1024
    rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip()
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout.strip()
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "ram_bytes": mem,
        "kernel": platform.release(),
        "python": platform.python_version(),
        "rustc": rustc,
        "commit": commit + ("-dirty" if dirty else ""),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }


def inspect_subset(corpus, limit):
    """The first .eval files (by path) totalling at least `limit` bytes."""
    files = []
    for d, _, names in os.walk(os.path.join(corpus, "inspect")):
        files += [os.path.join(d, n) for n in names if n.endswith(".eval")]
    files.sort()
    chosen, total = [], 0
    for f in files:
        if total >= limit:
            break
        chosen.append(f)
        total += os.path.getsize(f)
    return chosen, total


def clean_symbol(s):
    """A perf symbol without the padding and empty columns perf appends."""
    return re.sub(r"(\s+-)+\s*$", "", s).strip()


def profile(a, res):
    """A sampling profile of `coroner classify` on one thread over the whole corpus: perf with
    DWARF call stacks (the release build keeps line tables), attributed to coroner's stages by
    bench/perf_attrib.py, plus the flat self-time table."""
    probe = subprocess.run(["perf", "stat", "-e", "instructions", "true"], capture_output=True, text=True)
    hw = "<not supported>" not in probe.stderr and probe.returncode == 0
    sample = subprocess.run(["perf", "record", "-e", "cpu-clock", "-o", "/tmp/coroner-perf-probe.data", "true"], capture_output=True, text=True)
    if sample.returncode != 0:
        res["profile"] = {"tool": None, "note": "perf record is not available: " + sample.stderr[-300:]}
        return
    data = os.path.join(a.out, "perf.data")
    cmd = ["perf", "record", "-e", "cpu-clock", "-F", "99", "--call-graph", "dwarf,32768", "-o", data, "--"]
    cmd += [a.coroner, "classify", "-q", a.corpus, "-o", "/dev/null"] + res.get("classify_args", [])
    log("profile: " + " ".join(cmd))
    r, _ = timed(cmd, env={"RAYON_NUM_THREADS": "1"})
    rep = subprocess.run(
        ["perf", "report", "-i", data, "--stdio", "--no-children", "--sort", "symbol", "--percent-limit", "0.5", "-g", "none", "--no-inline"],
        capture_output=True,
        text=True,
    )
    top = []
    for line in rep.stdout.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+\[[.k]\]\s+(.*)", line)
        if m:
            top.append({"pct": float(m.group(1)), "symbol": clean_symbol(m.group(2))})
    with open(os.path.join(a.out, "perf-self.txt"), "w") as fh:
        fh.write(rep.stdout)
    attrib = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "perf_attrib.py"), data], capture_output=True, text=True)
    stages = json.loads(attrib.stdout) if attrib.returncode == 0 else {}
    res["profile"] = {
        "tool": ("perf record -e cpu-clock (software clock: this VM exposes no hardware counters)" if not hw else "perf record -e cpu-clock")
        + " -F 99 --call-graph dwarf",
        "run": r,
        "self": top[:30],
        "stages": stages,
    }


def measure(a):
    res = {"machine": machine(), "corpus": {}, "floor": {}, "coroner": {}, "peers": {}}
    manifest = tomllib.load(open(os.path.join(a.corpus, "corpus.toml"), "rb"))
    res["corpus"] = {"dir": a.corpus, "manifest": manifest, "bytes": sum(f["bytes"] for f in manifest["format"])}
    res["corpus"]["trajectories"] = sum(f["trajectories"] for f in manifest["format"])
    log(f"corpus: {res['corpus']['bytes'] / 1e6:.0f} MB, {res['corpus']['trajectories']} trajectories; load {loadavg()}")
    # Warm the page cache: every measurement reads from memory, none from the disk.
    subprocess.run(f"find {a.corpus} -type f -exec cat {{}} + > /dev/null", shell=True, check=True)

    log("parse floor (whole corpus)")
    r, out = timed([a.floor, a.corpus, "--passes", str(a.passes)])
    res["floor"]["all"] = {"run": r, "result": json.loads(out)}
    for f in FORMATS:
        d = os.path.join(a.corpus, f)
        if os.path.isdir(d):
            r, out = timed([a.floor, d, "--passes", "1"])
            res["floor"][f] = {"run": r, "result": json.loads(out)}

    # Claude Code sessions do not record that --max-turns stopped them: classify is told.
    limits = sorted({f["step_limit"] for f in manifest["format"] if f.get("step_limit")})
    extra = {"ingest": [], "classify": ["--step-limit", str(limits[0])] if limits else []}
    res["classify_args"] = extra["classify"]
    for cmd in ["ingest", "classify"]:
        for threads in ["1", "2"]:
            log(f"coroner {cmd}, {threads} thread(s)")
            res["coroner"][f"{cmd}-{threads}"] = best(
                [a.coroner, cmd, "-q", a.corpus, "-o", "/dev/null"] + extra[cmd], a.passes, env={"RAYON_NUM_THREADS": threads}
            )
    for f in FORMATS:
        d = os.path.join(a.corpus, f)
        if os.path.isdir(d):
            log(f"coroner classify {f}, 1 thread")
            res["coroner"][f"classify-1-{f}"] = best(
                [a.coroner, "classify", "-q", d, "-o", "/dev/null"] + extra["classify"], 1, env={"RAYON_NUM_THREADS": "1"}
            )

    log("peer: hand-written Python")
    pj = os.path.join(a.out, "peer_handwritten.json")
    r, _ = timed([sys.executable, os.path.join(ROOT, "bench", "peer_handwritten.py"), a.corpus, "--json", pj])
    res["peers"]["handwritten"] = {"run": r, "result": json.load(open(pj))}
    log("peer: Python json.load alone (its parse floor)")
    pj2 = os.path.join(a.out, "peer_json_only.json")
    r, _ = timed([sys.executable, os.path.join(ROOT, "bench", "peer_handwritten.py"), a.corpus, "--json-only", "--json", pj2])
    res["peers"]["json_only"] = {"run": r, "result": json.load(open(pj2))}

    files, total = inspect_subset(a.corpus, a.inspect_subset)
    if files:
        log(f"peer: Inspect read_eval_log on {len(files)} .eval files ({total / 1e6:.0f} MB)")
        sub = os.path.join(a.out, "inspect-subset")
        if os.path.isdir(sub):
            for n in os.listdir(sub):
                os.remove(os.path.join(sub, n))
        os.makedirs(sub, exist_ok=True)
        for f in files:
            os.symlink(os.path.abspath(f), os.path.join(sub, os.path.basename(f)))
        ij = os.path.join(a.out, "peer_inspect.json")
        r, _ = timed([a.venv_python, os.path.join(ROOT, "bench", "peer_inspect.py"), sub, "--json", ij])
        res["peers"]["inspect"] = {"run": r, "result": json.load(open(ij)), "files": len(files), "bytes": total}
        for cmd in ["ingest", "classify"]:
            for threads in ["1", "2"]:
                res["coroner"][f"inspect-subset-{cmd}-{threads}"] = best(
                    [a.coroner, cmd, "-q"] + files + ["-o", "/dev/null"], a.passes, env={"RAYON_NUM_THREADS": threads}
                )
        r, out = timed([a.floor, sub, "--passes", "1"])
        res["floor"]["inspect-subset"] = {"run": r, "result": json.loads(out)}

    if a.profile:
        profile(a, res)
    return res


def mbps(nbytes, secs):
    return nbytes / 1e6 / secs if secs else 0.0


def fmt_secs(s):
    return f"{s:.1f} s" if s < 600 else f"{s / 60:.1f} min"


def typed_floor(res, name):
    """The typed floor of one format's files in MB/s on disk, or None when not measured."""
    return res["floor"].get(name, {}).get("result", {}).get("parse_typed", {}).get("mb_per_s")


def verdict(ok):
    return "**met**" if ok else "**not met**"


def report(res):
    m = res["machine"]
    corpus = res["corpus"]
    B = corpus["bytes"]
    N = corpus["trajectories"]
    fl = res["floor"]["all"]["result"]
    floor_mbps = fl["parse_value"]["mb_per_s"]
    read_mbps = fl["read"]["mb_per_s"]
    c = res["coroner"]
    lines = []
    w = lines.append
    w("# Benchmarks")
    w("")
    w("Throughput and memory of `coroner ingest` and `coroner classify` on a generated corpus, against")
    w("the parse floor (serde_json reading the same bytes into `serde_json::Value` on one thread) and")
    w("against two peers: a hand-written Python analysis and Inspect AI's own log reader.")
    w("")
    w("Regenerate everything (build, corpus, runs, this file) with one command:")
    w("")
    w("```sh")
    w("bench/run.sh            # SIZE=2G SEED=1 PASSES=2 by default; see the script's header")
    w("```")
    w("")
    w("This file is written by `bench/suite.py`; edit that, not this. Raw numbers: `target/bench-results/results.json`.")
    w("")
    w("## Machine and conditions")
    w("")
    w(f"- Date: {m['date']}; coroner commit `{m['commit']}`; {m['rustc']}; Python {m['python']}")
    w(f"- CPU: {m['cpu']}, `nproc` = {m['nproc']}; RAM {m['ram_bytes'] / 2**30:.1f} GiB; Linux {m['kernel']}")
    loads = [r["load_before"][0] for r in c.values()] + [r["load_after"][0] for r in c.values()]
    w(
        f"- The machine is shared: the 1-minute load average ranged {min(loads):.2f}–{max(loads):.2f} during the coroner runs"
        f" (2 cores; a load above 2 means other work competed for them). Each coroner figure is the fastest of"
        f" {len(next(iter(c.values()))['all_walls'])} runs; every run's wall time is in results.json."
    )
    w("- The corpus is read from the page cache (warmed before timing); output goes to `/dev/null`.")
    w("")
    rr = res.get("real_run")
    if rr:
        py = rr["python_json_load"]
        w("## A real run: coroner against Python's `json.load`")
        w("")
        w(
            f"`{rr['source']}`: mini-swe-agent 1.15 + Gemini 3 Pro on SWE-bench Verified as published, {rr['trajectories']} trajectories"
            f" and their verdicts, {rr['json_files']:,} JSON files, {rr['json_bytes'] / 1e6:,.0f} MB (`bench/real_run.py`, measured"
            f" {rr['date']} at `{rr['commit']}`). CPU seconds (user + system) of each whole process, lowest of {rr['passes']} runs,"
            " page cache warm; coroner on one thread (`RAYON_NUM_THREADS=1`) unless noted."
        )
        w("")
        w("| reader | CPU s | × Python `json.load` | MB/s per core | wall | peak RSS |")
        w("|---|---:|---:|---:|---:|---:|")
        rows = [
            ("Python: `json.load` of every `.json` file, nothing else", py),
            ("`coroner ingest`", rr["ingest"]),
            ("`coroner classify`", rr["classify"]),
            ("`coroner classify`, 2 threads", rr["classify_2_threads"]),
        ]
        for name, r in rows:
            w(
                f"| {name} | {r['cpu']:.2f} | {r['cpu'] / py['cpu']:.2f} | {mbps(rr['json_bytes'], r['cpu']):,.0f} | {fmt_secs(r['wall'])}"
                f" | {r['max_rss_kb'] / 1024:,.0f} MB |"
            )
        w("")
    w("## Corpus")
    w("")
    mf = corpus["manifest"]
    how = f"--target-bytes {mf['target_bytes']}" if mf.get("target_bytes") else f"--count {mf.get('count')}"
    w(f"`coroner gen-corpus {how} --seed {mf['seed']}`: {B / 1e6:,.0f} MB on disk, {N:,} trajectories,")
    w("5–300 steps each, tool outputs up to 100 KB, every failure class in the mix (see `corpus.toml`).")
    w("")
    w("| format | trajectories | files | MB on disk | JSON MB parsed by the floor |")
    w("|---|---:|---:|---:|---:|")
    for f in corpus["manifest"]["format"]:
        pf = res["floor"].get(f["name"], {}).get("result", {}).get("parse_value", {})
        w(f"| {f['name']} | {f['trajectories']:,} | {f['files']:,} | {f['bytes'] / 1e6:,.0f} | {pf.get('parsed_bytes', 0) / 1e6:,.0f} |")
    w("")
    w("Inspect `.eval` archives are deflated ZIPs: their members hold about "
      f"{res['floor'].get('inspect', {}).get('result', {}).get('parse_value', {}).get('parsed_bytes', 0) / max(1, next((f['bytes'] for f in corpus['manifest']['format'] if f['name'] == 'inspect'), 1)):.1f}× "
      "their size in JSON, which every reader must inflate and parse. All MB/s figures below are MB **on disk** per second.")
    w("")
    w("## 1. The parse floor (one thread)")
    w("")
    w("| what | MB/s | seconds |")
    w("|---|---:|---:|")
    w(f"| read the bytes (`std::fs::read` of every file) | {read_mbps:,.0f} | {fl['read']['secs']:.2f} |")
    w(f"| read + serde_json into `Value` (every JSON file, JSONL line, `.eval` member inflated) | {floor_mbps:,.1f} | {fl['parse_value']['secs']:.1f} |")
    if fl.get("parse_typed"):
        w(
            f"| read + serde_json into typed structs of the fields a record needs, owned (`src/bench/typed.rs`) | {fl['parse_typed']['mb_per_s']:,.1f} |"
            f" {fl['parse_typed']['secs']:.1f} |"
        )
    w("")
    w(f"{fl['parse_value']['documents']:,} JSON documents, {fl['parse_value']['parsed_bytes'] / 1e6:,.0f} MB of JSON; `benches/parse_floor.rs`, fastest of {res['floor']['all']['result']['passes']} passes.")
    w("")
    w("## 2–3. coroner end to end: throughput, scaling, peak memory")
    w("")
    w("| command | threads | wall | MB/s | trajectories/s | × parse floor | peak RSS |")
    w("|---|---:|---:|---:|---:|---:|---:|")
    for cmd in ["ingest", "classify"]:
        for t in ["1", "2"]:
            r = c[f"{cmd}-{t}"]
            w(
                f"| `coroner {cmd}` | {t} | {fmt_secs(r['wall'])} | {mbps(B, r['wall']):,.1f} | {N / r['wall']:,.0f} | "
                f"{mbps(B, r['wall']) / floor_mbps:.2f} | {r['max_rss_kb_all'] / 1024:,.0f} MB |"
            )
    w("")
    si = c["ingest-1"]["wall"] / c["ingest-2"]["wall"]
    sc = c["classify-1"]["wall"] / c["classify-2"]["wall"]
    w(f"Scaling from 1 to 2 threads: ingest {si:.2f}×, classify {sc:.2f}×.")
    w("")
    w("Per format, `coroner classify` on one thread against the floor of the same files:")
    w("")
    w("| format | classify MB/s | `Value` floor MB/s | × `Value` floor | typed floor MB/s | × typed floor | trajectories/s | peak RSS |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|")
    for f in corpus["manifest"]["format"]:
        r = c.get(f"classify-1-{f['name']}")
        pf = res["floor"].get(f["name"], {}).get("result", {}).get("parse_value")
        if not r or not pf:
            continue
        cm = mbps(f["bytes"], r["wall"])
        tf = typed_floor(res, f["name"])
        typed = f"{tf:,.1f} | {cm / tf:.2f}" if tf else "– | –"
        w(
            f"| {f['name']} | {cm:,.1f} | {pf['mb_per_s']:,.1f} | {cm / pf['mb_per_s']:.2f} | {typed} | {f['trajectories'] / r['wall']:,.0f}"
            f" | {r['max_rss_kb'] / 1024:,.0f} MB |"
        )
    w("")
    w("## 4. Peers on the same files")
    w("")
    hw = res["peers"]["handwritten"]
    hws = hw["result"]["secs"]
    w("| reader | files | wall | MB/s | × slower than `coroner classify` (1 thread / 2 threads) | peak RSS |")
    w("|---|---|---:|---:|---:|---:|")
    w(
        f"| hand-written Python (`bench/peer_handwritten.py`: `json.load`, counts, class heuristics) | whole corpus | {fmt_secs(hws)} | {mbps(B, hws):,.1f} | "
        f"{hws / c['classify-1']['wall']:.1f}× / {hws / c['classify-2']['wall']:.1f}× | {hw['run']['max_rss_kb'] / 1024:,.0f} MB |"
    )
    jo = res["peers"].get("json_only")
    if jo:
        js = jo["result"]["secs"]
        w(
            f"| Python `json.load` of every document, nothing else (the script's own floor) | whole corpus | {fmt_secs(js)} | {mbps(B, js):,.1f} | "
            f"{js / c['classify-1']['wall']:.1f}× / {js / c['classify-2']['wall']:.1f}× | {jo['run']['max_rss_kb'] / 1024:,.0f} MB |"
        )
    ip = res["peers"].get("inspect")
    if ip:
        ib = ip["bytes"]
        isecs = ip["result"]["secs"]
        c1 = c["inspect-subset-classify-1"]["wall"]
        c2 = c["inspect-subset-classify-2"]["wall"]
        i1 = c["inspect-subset-ingest-1"]["wall"]
        w(
            f"| Inspect `read_eval_log` ({ip['result']['reader']}) | {ip['files']} `.eval` files, {ib / 1e6:,.0f} MB | {fmt_secs(isecs)} | {mbps(ib, isecs):,.1f} | "
            f"{isecs / c1:.1f}× / {isecs / c2:.1f}× | {ip['run']['max_rss_kb'] / 1024:,.0f} MB |"
        )
        w("")
        w(
            f"On those {ip['files']} `.eval` files coroner ingest takes {i1:.1f} s on one thread and classify {c1:.1f} s "
            f"({mbps(ib, c1):,.1f} MB/s; the floor on them: {res['floor']['inspect-subset']['result']['parse_value']['mb_per_s']:,.1f} MB/s). "
            "Inspect's time excludes its import (several seconds); the hand-written script's includes its walk."
        )
    w("")
    w("The Python script's own counts (steps, tool calls, per-class heuristics) are in `target/bench-results/peer_handwritten.json`;")
    w("its heuristics are what a notebook would do, not coroner's rules, so its class counts differ where the heuristics are naive.")
    w("")
    w("## Targets")
    w("")
    per_thread = mbps(B, c["classify-1"]["wall"]) / floor_mbps
    rss = max(c[k]["max_rss_kb_all"] for k in ["ingest-1", "ingest-2", "classify-1", "classify-2"]) / 1024
    w("| target | measured | |")
    w("|---|---|---|")
    per_thread2 = mbps(B, c["classify-2"]["wall"]) / 2 / floor_mbps
    w(
        f"| `classify` per thread ≥ 50% of the single-thread parse floor | {per_thread * 100:.0f}% on one thread, {per_thread2 * 100:.0f}% per thread on two |"
        f" {verdict(min(per_thread, per_thread2) >= 0.5)} |"
    )
    per_format = [
        (f["name"], mbps(f["bytes"], c[f"classify-1-{f['name']}"]["wall"]) / typed_floor(res, f["name"]))
        for f in corpus["manifest"]["format"]
        if c.get(f"classify-1-{f['name']}") and typed_floor(res, f["name"])
    ]
    if per_format:
        worst = min(per_format, key=lambda x: x[1])
        w(
            f"| `classify` on one thread ≥ 50% of the typed serde_json floor, every format | "
            f"{', '.join(f'{n} {x * 100:.0f}%' for n, x in per_format)} (lowest: {worst[0]}) | {verdict(worst[1] >= 0.5)} |"
        )
    w(f"| 2 threads ≥ 1.8× one thread | classify {sc:.2f}×, ingest {si:.2f}× | {verdict(sc >= 1.8)} |")
    w(f"| peak RSS < 256 MB on the 2 GB corpus | {rss:,.0f} MB (largest of ingest/classify, 1 and 2 threads) | {verdict(rss < 256)} |")
    if rr:
        xc = rr["classify"]["cpu"] / rr["python_json_load"]["cpu"]
        xi = rr["ingest"]["cpu"] / rr["python_json_load"]["cpu"]
        w(f"| real run: `classify` ≤ 0.5× the CPU time of Python's `json.load` alone (one thread) | {xc:.2f}× | {verdict(xc <= 0.5)} |")
        w(f"| real run: `ingest` ≤ 0.4× the CPU time of Python's `json.load` alone (one thread) | {xi:.2f}× | {verdict(xi <= 0.4)} |")
    hw_ratio = hws / c["classify-1"]["wall"]
    bound = ""
    if jo:
        bound = f"; at the serde_json floor coroner could be at most {hws / fl['parse_value']['secs']:.1f}× (the script spends {jo['result']['secs'] / hws * 100:.0f}% of its time in `json.load`)"
    w(f"| ≥ 20× the hand-written Python script | {hw_ratio:.1f}× on one thread, {hws / c['classify-2']['wall']:.1f}× on two{bound} | {verdict(hw_ratio >= 20)} (one thread) |")
    if ip:
        ir = isecs / c1
        w(f"| ≥ 10× Inspect's reader on `.eval` | {ir:.1f}× on one thread, {isecs / c2:.1f}× on two | {verdict(ir >= 10)} (one thread) |")
    w("")
    prof = res.get("profile")
    if prof and prof.get("tool"):
        st = prof.get("stages") or {}
        w("## Where the time goes")
        w("")
        w(f"`{prof['tool']}` of `coroner classify` on one thread over the whole corpus ({fmt_secs(prof['run']['wall'])} under perf,")
        w(f"{st.get('samples', 0):,} samples). Each sample is charged to the innermost coroner function on its stack and, by that")
        w("function's module, to a stage of the pipeline (`bench/perf_attrib.py`); the hottest leaf functions of each stage follow.")
        w("")
        w("| share | stage | hottest leaf functions (share of all samples) |")
        w("|---:|---|---|")
        for s in st.get("stages", []):
            if s["pct"] < 0.5:
                continue
            leaves = "; ".join(f"`{clean_symbol(l['symbol'])[:60]}` {l['pct']:.1f}" for l in s["top_leaves"][:3])
            w(f"| {s['pct']:.1f}% | {s['stage']} | {leaves} |")
        w("")
        w("Self time by function (flat profile), top entries:")
        w("")
        w("| self % | function |")
        w("|---:|---|")
        for t in prof["self"][:20]:
            sym = clean_symbol(t["symbol"])
            if len(sym) > 110:
                sym = sym[:107] + "..."
            w(f"| {t['pct']:.1f} | `{sym}` |")
        w("")
    analysis = os.path.join(ROOT, "bench", "analysis.md")
    if os.path.exists(analysis):
        w(open(analysis).read().rstrip())
        w("")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--coroner")
    ap.add_argument("--floor")
    ap.add_argument("--venv-python")
    ap.add_argument("--passes", type=int, default=2)
    ap.add_argument("--inspect-subset", type=int, default=60_000_000)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--only-report", action="store_true", help="rewrite BENCHMARKS.md from OUT/results.json")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rpath = os.path.join(a.out, "results.json")
    if a.only_report:
        res = json.load(open(rpath))
    else:
        res = measure(a)
        with open(rpath, "w") as fh:
            json.dump(res, fh, indent=2)
    real = os.path.join(a.out, "real_run.json")
    if os.path.exists(real):
        res["real_run"] = json.load(open(real))
    with open(os.path.join(ROOT, "BENCHMARKS.md"), "w") as fh:
        fh.write(report(res))
    log("wrote BENCHMARKS.md")


if __name__ == "__main__":
    sys.exit(main())
