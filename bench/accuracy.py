#!/usr/bin/env python3
"""Scores coroner against the hand labels of the accuracy suite and writes docs/accuracy.md.

Run by bench/accuracy.sh after the data is fetched. Classifies each source directory under
accuracy/data with coroner, joins every label (accuracy/labels.csv) to its verdict by source file
and task id, and reports: Cohen's kappa of the primary class with its interval (computed by
`coroner spotcheck score`, overall and per family), per-class precision and recall, the
confusion matrix, per-flag precision and recall, unclassified failures, hallucinations of tools
that existed, every disagreement with both labels, and the flag rates among all failures of the
500-trajectory SWE-bench run beside the rates read by hand.
"""
import argparse
import tomllib
import csv
import json
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ACC = ROOT / "accuracy"
FLAGS = ["unverified", "regressed", "false_done", "edited_tests"]
# Which classes carry each flag (DESIGN.md's classes table and decisions on hard cases; the
# labels' README): a label with a flag its primary class does not carry breaks the schema.
CARRIED_BY = {
    "unverified": {"worked_then_wrong"},
    "edited_tests": {"worked_then_wrong"},
    "regressed": {"worked_then_wrong", "early_resignation"},
    "false_done": {"worked_then_wrong", "early_resignation"},
}


def schema_errors(labels):
    """Labels that set a flag their primary class does not carry: said in the report, not scored."""
    out = []
    for lab in labels:
        for fl in (x for x in lab["flags"].split(";") if x):
            if fl in CARRIED_BY and lab["primary"] not in CARRIED_BY[fl]:
                out.append(f"n={lab['n']}: `{fl}` with primary {lab['primary']}")
    return out
# The classes in precedence order, as the taxonomy coroner runs with defines them.
CLASSES = tomllib.load(open(ROOT / "rules/taxonomy.toml", "rb"))["precedence"]


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode not in (0, 1, 3):
        sys.exit(f"{' '.join(map(str, cmd))} exited {r.returncode}:\n{r.stderr[-4000:]}")
    return r


def magentic_verdicts(tmp):
    """The Magentic-One runs AgentRx annotated are its failures: a verdict file saying so."""
    gt = ACC / "data/agentrx/data/ground_truth/magentic_one_ground_truth.json"
    out = Path(tmp) / "magentic-verdicts.csv"
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["task_id", "outcome"])
        for g in json.load(open(gt)):
            w.writerow([g["trajectory_id"], "failed"])
    return out


def without_trailing_commas(path, tmp):
    """CodeR's results.json ends every list with a comma, which JSON forbids and coroner refuses
    (with the line); a user fixes the file, and this is that fix, applied to a copy."""
    text = Path(path).read_text()
    out = Path(tmp) / "coder-results.json"
    out.write_text(re.sub(r",(\s*[\]}])", r"\1", text))
    return out


def classify(coroner, tmp):
    """Verdicts of every source, keyed by source name."""
    # What a user would pass for a source beyond its directory; every other source of
    # candidates.csv is classified as it is.
    extra = {
        "agentrx": ["--verdicts", str(magentic_verdicts(tmp))],
        # The run's iteration cap, which its completion logs do not record: a user passes what
        # they configured. Read off the run itself (209 of its 500 logs stop at exactly 50 calls,
        # none later; NOTES.md, n=335-344).
        "mopenhands-swebv": ["--step-limit", "50"],
        "coder-gpt4-lite": ["--verdicts", str(without_trailing_commas(ACC / "data/coder-gpt4-lite/results.json", tmp))],
    }
    sources = list(dict.fromkeys(c["source"] for c in csv.DictReader(open(ACC / "candidates.csv"))))
    plans = {source: extra.get(source, []) for source in sources}
    out = {}
    for source, extra in plans.items():
        d = ACC / "data" / source
        if not d.is_dir():
            sys.exit(f"{d} is absent: run accuracy/fetch.sh first")
        path = Path(tmp) / f"{source}.jsonl"
        r = run([coroner, "classify", str(d), *extra, "-o", str(path), "-q"])
        out[source] = [json.loads(l) for l in open(path)]
        print(f"{source}: {len(out[source])} verdicts ({r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ''})", file=sys.stderr)
    return out


def join(labels, verdicts):
    """label -> verdict, by the label's file (the verdict's first source file) and task id."""
    pairs, missing = [], []
    for lab in labels:
        cands = [
            v
            for v in verdicts[lab["source"]]
            if (v.get("source") or "").endswith("/" + lab["path"]) and v["task_id"] == lab["task_id"]
        ]
        if lab["trial"]:
            cands = [v for v in cands if str(v.get("trial")) == lab["trial"]] or cands
        if len(cands) >= 1:
            pairs.append((lab, cands[0]))
        else:
            missing.append(lab)
    return pairs, missing


def machine(v):
    if v["outcome"] == "passed":
        return "passed"
    return v.get("primary") or ("unknown outcome" if v["outcome"] == "unknown" else "unclassified")


def spotcheck(coroner, pairs, tmp, name):
    """Kappa, confusion and per-class figures from coroner's own scorer."""
    sheet = Path(tmp) / f"{name}.csv"
    key = Path(tmp) / f"{name}.key.json"
    with open(sheet, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["item", "trajectory_id", "human_label"])
        for i, (lab, v) in enumerate(pairs, 1):
            w.writerow([i, v["trajectory_id"], lab["primary"]])
    items = [
        {
            "item": i,
            "trajectory_id": v["trajectory_id"],
            "task_id": v["task_id"],
            "outcome": v["outcome"],
            "primary": v.get("primary"),
            "classes": v.get("classes", []),
            "flags": v.get("flags", []),
        }
        for i, (lab, v) in enumerate(pairs, 1)
    ]
    json.dump(
        {"coroner_version": "", "seed": 0, "per_class": 0, "passed": 0, "rules_digest": "", "inputs": [], "strata": [], "items": items},
        open(key, "w"),
    )
    r = run([coroner, "spotcheck", "score", str(sheet), "--key", str(key), "--format", "json"])
    return json.loads(r.stdout)


def flag_scores(pairs, carried=True):
    """Per flag: (flag, both, coroner only, label only, precision, recall, n scored, the n's of
    each kind of miss). With `carried`, over the trajectories whose labelled primary class carries
    the flag: elsewhere the label says nothing of it, and a disagreement on the class is counted
    once, in the kappa."""
    rows = []
    for f in FLAGS:
        tp = fp = fn = scored = 0
        only_c, only_l = [], []
        for lab, v in pairs:
            if carried and lab["primary"] not in CARRIED_BY[f]:
                continue
            scored += 1
            h = f in lab["flags"].split(";")
            m = f in v.get("flags", [])
            tp += h and m
            fp += m and not h
            fn += h and not m
            if m and not h:
                only_c.append(lab["n"])
            if h and not m:
                only_l.append(lab["n"])
        p = tp / (tp + fp) if tp + fp else None
        r = tp / (tp + fn) if tp + fn else None
        rows.append((f, tp, fp, fn, p, r, scored, only_c, only_l))
    return rows


def pct(x):
    return "–" if x is None else f"{x:.2f}"


def kappa_cell(s):
    k = s["kappa"]
    if k.get("kappa") is None or k["kappa"] != k["kappa"]:
        return "n/a (one label only)"
    lo, hi = k["interval"]["lo"], k["interval"]["hi"]
    return f"{k['kappa']:.3f} [{lo:.3f}, {hi:.3f}]"


def esc(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--coroner", required=True)
    ap.add_argument("--out", default=str(ROOT / "docs/accuracy.md"))
    ap.add_argument("--commit", default="")
    a = ap.parse_args()
    labels = [r for r in csv.DictReader(open(ACC / "labels.csv"))]
    skipped = [r for r in labels if r["primary"] == "skip"]
    labels = [r for r in labels if r["primary"] != "skip"]
    uncarried = schema_errors(labels)
    with tempfile.TemporaryDirectory() as tmp:
        verdicts = classify(a.coroner, tmp)
        pairs, missing = join(labels, verdicts)
        overall = spotcheck(a.coroner, pairs, tmp, "all")
        fams = defaultdict(list)
        for lab, v in pairs:
            fams[lab["family"]].append((lab, v))
        per_family = {f: spotcheck(a.coroner, p, tmp, "fam-" + str(i)) for i, (f, p) in enumerate(sorted(fams.items()))}
    flags = flag_scores(pairs)
    unclassified = sum(1 for _, v in pairs if v.get("primary") == "unclassified")
    halluc_existed = [(lab, v) for lab, v in pairs if v.get("primary") == "hallucinated_tool" and lab["primary"] != "hallucinated_tool"]
    disagree = [(lab, v) for lab, v in pairs if lab["primary"] != machine(v)]

    # The whole SWE-bench run: flag rates among its failures, beside the rates read by hand.
    swe = [v for v in verdicts["mini-swebench"] if v["outcome"] == "failed"]
    swe_labels = [lab for lab in labels if lab["source"] == "mini-swebench"]
    swe_source = next(
        f"{c['repo']}@{c['commit']}" for c in csv.DictReader(open(ACC / "candidates.csv")) if c["source"] == "mini-swebench"
    )
    w = []
    w.append("# coroner's accuracy on real runs\n")
    w.append(
        f"Generated by `bench/accuracy.sh` (do not edit by hand). {len(labels) + len(skipped)} failed trajectories "
        "from public runs, drawn by "
        "`accuracy/choose.py` and labelled by reading them before coroner was run on them (`accuracy/labels.csv`, "
        "the judgement calls in `accuracy/NOTES.md`); coroner classified them with its built-in rules, and "
        "`coroner spotcheck score` computed the agreement.\n"
    )
    if a.commit:
        w.append(f"coroner at `{a.commit}`.\n")
    w.append(
        f"Labelled: {len(labels)} (and {len(skipped)} skipped because their verdict looks wrong: "
        + ", ".join(f"n={r['n']}" for r in skipped)
        + f"); joined to a verdict: {len(pairs)}; not found: {len(missing)}"
        + (" (" + ", ".join(f"n={m['n']}" for m in missing) + ")" if missing else "")
        + ".\n"
    )
    w.append("## Agreement on the primary class\n")
    w.append(f"- Cohen's kappa: **{kappa_cell(overall)}** (95% interval), {overall['strength']}")
    ag = overall["agreement"]
    w.append(f"- raw agreement: {ag['agreed']}/{ag['n']} = {ag['rate']:.3f}")
    w.append(f"- unclassified failures: {unclassified}/{len(pairs)} = {unclassified / max(1, len(pairs)):.1%}")
    w.append(f"- `hallucinated_tool` where the labeller found no hallucination: {len(halluc_existed)}\n")
    w.append("### Per family\n")
    w.append("| family | n | kappa [95% interval] | agreement |")
    w.append("|---|---|---|---|")
    for f, s in per_family.items():
        g = s["agreement"]
        w.append(f"| {f} | {g['n']} | {kappa_cell(s)} | {g['agreed']}/{g['n']} = {g['rate']:.2f} |")
    skewed = [
        f"{f}: {s['agreement']['agreed']} of {s['agreement']['n']} agree"
        for f, s in per_family.items()
        if s["agreement"]["n"] > 1 and s["agreement"]["rate"] >= 0.9 and (s["kappa"].get("kappa") or 0) < 0.7
    ]
    if skewed:
        w.append(
            "\nKappa corrects agreement for what chance would give with the same class shares, so where nearly every "
            "label of a family is one class it says little: one disagreement on the only trajectory of another class "
            "can bring it to 0. Read the agreement column there (" + "; ".join(skewed) + ")."
        )
    w.append("\n### Per class\n")
    w.append("| class | labelled | coroner | precision | recall |")
    w.append("|---|---|---|---|---|")
    lab_n = Counter(lab["primary"] for lab, _ in pairs)
    mach_n = Counter(machine(v) for _, v in pairs)
    for c in CLASSES + sorted(set(mach_n) - set(CLASSES)):
        if not lab_n[c] and not mach_n[c]:
            continue
        tp = sum(1 for lab, v in pairs if lab["primary"] == c and machine(v) == c)
        p = tp / mach_n[c] if mach_n[c] else None
        r = tp / lab_n[c] if lab_n[c] else None
        w.append(f"| {c} | {lab_n[c]} | {mach_n[c]} | {pct(p)} | {pct(r)} |")
    w.append("\n### Confusion matrix (rows: the labels; columns: coroner)\n")
    cols = [c for c in CLASSES + sorted(set(mach_n) - set(CLASSES)) if lab_n[c] or mach_n[c]]
    w.append("| label \\ coroner | " + " | ".join(cols) + " |")
    w.append("|---|" + "---|" * len(cols))
    for r in cols:
        if not lab_n[r]:
            continue
        cells = [str(sum(1 for lab, v in pairs if lab["primary"] == r and machine(v) == c) or "") for c in cols]
        w.append(f"| {r} | " + " | ".join(cells) + " |")
    w.append("\n## Flags\n")
    w.append(
        "A flag is a sub-flag of the classes that carry it (`unverified` and `edited_tests`: worked_then_wrong; "
        "`regressed` and `false_done`: worked_then_wrong and early_resignation, DESIGN.md), and the labels set it only "
        "there (`accuracy/README.md`). So each flag is scored over the trajectories whose labelled primary class "
        "carries it: elsewhere the label says nothing of it. This favours precision: where the labelled class "
        "carries a flag and coroner's class does not, the miss still counts against recall, but where coroner's "
        "class carries one the labelled class does not, coroner's flag is not scored; the figures over every "
        "trajectory, below the table, count both. A flag counts when the labeller set it, and when coroner did.\n"
    )
    w.append("| flag | scored on | both | coroner only | label only | precision | recall | coroner only (n) | label only (n) |")
    w.append("|---|---|---|---|---|---|---|---|---|")
    for f, tp, fp, fn, p, r, scored, oc, ol in flags:
        w.append(f"| {f} | {scored} | {tp} | {fp} | {fn} | {pct(p)} | {pct(r)} | {', '.join(oc)} | {', '.join(ol)} |")
    if uncarried:
        w.append("\nLabels that set a flag their primary class does not carry (not scored above): " + "; ".join(uncarried) + ".\n")
    w.append("\nOver every labelled trajectory, whatever its class (coroner's flags on a class it got wrong count against it): "
             + "; ".join(f"{f} {pct(p)}/{pct(r)}" for f, _, _, _, p, r, *_ in flag_scores(pairs, carried=False)) + " (precision/recall).")
    w.append("\n## The whole SWE-bench run\n")
    w.append(
        f"mini-swe-agent 1.15 + Gemini 3 Pro on SWE-bench Verified (`{swe_source}`): "
        f"{len(verdicts['mini-swebench'])} trajectories ingested with their verdicts, {len(swe)} failed. Flag rates "
        f"among the failures, by coroner over all of them and by hand over the {len(swe_labels)} read:\n"
    )
    w.append("| flag | coroner, all failures | read by hand |")
    w.append("|---|---|---|")
    for f in FLAGS:
        cm = sum(1 for v in swe if f in v.get("flags", []))
        hm = sum(1 for lab in swe_labels if f in lab["flags"].split(";"))
        w.append(f"| {f} | {cm}/{len(swe)} = {cm / max(1, len(swe)):.0%} | {hm}/{len(swe_labels)} = {hm / max(1, len(swe_labels)):.0%} |")
    why = {}
    groups = tomllib.load(open(ACC / "disagreements.toml", "rb")).get("group", [])
    for g in groups:
        for n in g["n"]:
            why[str(n)] = g["name"]
    unexplained = [lab["n"] for lab, _ in disagree if lab["n"] not in why]
    w.append("\n## Every disagreement\n")
    w.append(
        f"{len(disagree)} disagreements, {len(disagree) - len(unexplained)} explained by the groups below "
        f"(`accuracy/disagreements.toml`)" + (f"; not yet explained: {', '.join('n=' + n for n in unexplained)}" if unexplained else "") + ".\n"
    )
    for g in groups:
        members = [lab["n"] for lab, _ in disagree if why.get(lab["n"]) == g["name"]]
        if members:
            w.append(f"- **{g['name']}** ({', '.join('n=' + m for m in members)}): {g['why'].strip()}")
    w.append("")
    w.append("| n | family | label | coroner | coroner's evidence | why they differ | the labeller's rationale |")
    w.append("|---|---|---|---|---|---|---|")
    for lab, v in sorted(disagree, key=lambda p: int(p[0]["n"])):
        ev = ", ".join(sorted({e["rule"] for e in v.get("evidence", []) if e["supports"] in CLASSES}))
        w.append(f"| {lab['n']} | {lab['family']} | {lab['primary']} | {machine(v)} | {esc(ev)} | {why.get(lab['n'], 'unexplained')} | {esc(lab['rationale'])} |")
    Path(a.out).write_text("\n".join(w) + "\n")
    print(f"kappa {kappa_cell(overall)}; wrote {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
