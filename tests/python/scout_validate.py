"""Reads scans written by `coroner classify --emit scout` with Inspect Scout's own readers.

Used by the write-back test (tests/write_back.rs) when CORONER_SCOUT_PYTHON names a Python that
has inspect-scout: `.ci/run` installs it, pinned by hash (requirements-scout.txt). Each argument
is a `scan_id=<id>` directory. Scout opens it as `scout view` and `scan_results_df` do (its
`_scan.json` and `_summary.json` through its pydantic models, the Parquet file through pyarrow
and pandas, a row by `uuid` as the viewer does), then this checks what it got: one complete
`coroner` scanner, one transcript-level result per transcript, and the value / explanation /
metadata columns of the expected types. Prints one line per scan; exit 0 when all pass, 1
otherwise.
"""

import json
import math
import pathlib
import sys

import pandas as pd
from inspect_scout import (
    ScannerSpec,
    ScanSpec,
    ScanTranscripts,
    Summary,
    scan_list,
    scan_results_arrow,
    scan_results_batches,
    scan_results_df,
    scan_status,
)
from inspect_scout._recorder.summary import ScannerSummary  # not exported; Summary's field type

SCANNER = "coroner"
# Scout's result columns (`ResultReport.to_df_columns` and the recorder's transcript columns)
# that its readers and viewer use; coroner writes every one of them.
REQUIRED = [
    "transcript_id",
    "transcript_source_type",
    "transcript_source_id",
    "transcript_source_uri",
    "scan_id",
    "scanner_key",
    "scanner_name",
    "input_type",
    "input_ids",
    "input",
    "uuid",
    "label",
    "value",
    "value_type",
    "answer",
    "explanation",
    "metadata",
    "message_references",
    "event_references",
    "scan_error",
    "scan_total_tokens",
    "scan_model_usage",
    "scan_events",
    "timestamp",
]
# What `value_type` says `value` is, once Scout's reader has cast it.
VALUE_TYPES = {"string": (str,), "boolean": (bool,), "number": (int, float), "null": (type(None),)}


def null(x):
    return x is None or x is pd.NA or (isinstance(x, float) and math.isnan(x))


def unknown_keys(raw, model, where):
    """Keys Scout's model would silently drop: a misspelt field is lost, not an error."""
    extra = sorted(set(raw) - set(model.model_fields))
    return [f"{where}: keys Scout does not know: {extra}"] if extra else []


def check(scan_dir):
    problems = []
    d = pathlib.Path(scan_dir)

    # _scan.json and _summary.json, as Scout's models read them.
    status = scan_status(str(d))
    spec, summary = status.spec, status.summary
    if d.name != f"scan_id={spec.scan_id}":
        problems.append(f"directory {d.name} is not scan_id={spec.scan_id}")
    if not status.complete:
        problems.append("scan is not complete")
    raw_spec = json.loads((d / "_scan.json").read_text())
    problems += unknown_keys(raw_spec, ScanSpec, "_scan.json")
    for k, s in raw_spec.get("scanners", {}).items():
        problems += unknown_keys(s, ScannerSpec, f"_scan.json scanners.{k}")
    if "transcripts" in raw_spec:
        problems += unknown_keys(raw_spec["transcripts"], ScanTranscripts, "_scan.json transcripts")
    raw_summary = json.loads((d / "_summary.json").read_text())
    problems += unknown_keys(raw_summary, Summary, "_summary.json")
    for k, s in raw_summary.get("scanners", {}).items():
        problems += unknown_keys(s, ScannerSummary, f"_summary.json scanners.{k}")
    if list(spec.scanners) != [SCANNER] or list(summary.scanners) != [SCANNER]:
        return problems + [f"scanners are {list(spec.scanners)} / {list(summary.scanners)}, not [{SCANNER!r}]"]
    counted = summary.scanners[SCANNER]

    # The scan is listed where `scout view` / `scout scan list` look for it.
    if spec.scan_id not in [s.spec.scan_id for s in scan_list(str(d.parent))]:
        problems.append(f"scan_list({d.parent}) does not list it")

    # The results, every column included.
    results = scan_results_df(str(d), exclude_columns=[])
    if list(results.scanners) != [SCANNER]:
        return problems + [f"result files are for {list(results.scanners)}, not [{SCANNER!r}]"]
    df = results.scanners[SCANNER]
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        return problems + [f"missing columns {missing}"]
    if len(df) == 0 or len(df) != counted.results or len(df) != counted.scans:
        problems.append(f"{len(df)} rows, the summary counts {counted.scans} scans, {counted.results} results")
    # One transcript-level result per transcript (a transcript: a sample uuid in one log).
    keys = list(zip(df["transcript_id"], df["transcript_source_uri"]))
    if len(set(keys)) != len(keys):
        problems.append("a transcript has more than one result")
    if spec.transcripts is not None and set(spec.transcripts.transcript_ids) != set(df["transcript_id"]):
        problems.append("_scan.json's transcript_ids are not the results' transcripts")
    if df["uuid"].isna().any() or df["uuid"].nunique() != len(df):
        problems.append("result uuids are missing or repeated")

    for i, row in df.iterrows():
        at = f"row {i} ({row['transcript_id']})"
        if row["scan_id"] != spec.scan_id or row["scanner_key"] != SCANNER:
            problems.append(f"{at}: scan_id/scanner_key {row['scan_id']}/{row['scanner_key']}")
        if row["input_type"] != "transcript" or json.loads(row["input_ids"]) != [row["transcript_id"]]:
            problems.append(f"{at}: not a transcript result: {row['input_type']} {row['input_ids']}")
        input_doc = json.loads(row["input"])
        if input_doc.get("transcript_id") != row["transcript_id"] or not isinstance(input_doc.get("messages"), list):
            problems.append(f"{at}: input does not name the transcript and its messages")
        kinds = VALUE_TYPES.get(row["value_type"])
        value = None if null(row["value"]) else row["value"]
        if kinds is None or not isinstance(value, kinds) or (row["value_type"] == "string" and not value):
            problems.append(f"{at}: value {value!r} is not a {row['value_type']}")
        if not (null(row["explanation"]) or isinstance(row["explanation"], str)):
            problems.append(f"{at}: explanation is a {type(row['explanation']).__name__}")
        meta = json.loads(row["metadata"])
        if not isinstance(meta, dict) or not {"outcome", "classes", "flags", "evidence", "trajectory_id"} <= set(meta):
            problems.append(f"{at}: metadata lacks coroner's keys: {row['metadata'][:80]}")
        elif meta["trajectory_id"] != row["transcript_source_id"]:
            problems.append(f"{at}: metadata names trajectory {meta['trajectory_id']}")
        for c in ("message_references", "event_references", "scan_events"):
            if not isinstance(json.loads(row[c]), list):
                problems.append(f"{at}: {c} is not a JSON list")
        if not null(row["scan_error"]):
            problems.append(f"{at}: scan_error {row['scan_error']!r}")

    # The viewer's row lookup: columns by `uuid`, through Scout's Arrow reader.
    arrow = scan_results_arrow(str(d))
    wanted = ["value", "value_type", "explanation", "metadata", "input"]
    for _, row in df.iterrows():
        got = arrow.get_fields(SCANNER, "uuid", row["uuid"], wanted)
        if got["value_type"] != row["value_type"] or got["metadata"] != row["metadata"] or got["input"] is None:
            problems.append(f"viewer lookup of {row['uuid']} disagrees: {got}")

    # The other granularity and the streaming reader see the same rows.
    by_transcript = scan_results_df(str(d), rows="transcripts").scanners[SCANNER]
    streamed = pd.concat(list(scan_results_batches(str(d), SCANNER)))
    if len(by_transcript) != len(df) or list(streamed["uuid"]) != list(df["uuid"]):
        problems.append(f"rows='transcripts' gives {len(by_transcript)} rows, batches {len(streamed)}")

    if not problems:
        values = df["value"].value_counts().to_dict()
        print(f"ok   {d} ({len(df)} results, {df['transcript_id'].nunique()} transcript ids; {values})")
    return problems


bad = 0
for name in sys.argv[1:]:
    try:
        problems = check(name)
    except Exception as e:  # Scout's own reader refused the scan
        problems = [f"{type(e).__name__}: {e}"]
    if problems:
        bad += 1
        print(f"FAIL {name}\n  " + "\n  ".join(problems), file=sys.stderr)
sys.exit(1 if bad or not sys.argv[1:] else 0)
