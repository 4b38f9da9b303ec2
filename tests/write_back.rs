//! Write-back: `classify --emit atif` annotates each ATIF trajectory with its verdict (the
//! annotated file still validates against Harbor's ATIF models, and reads back to the same
//! verdict); `--emit scout` writes an Inspect Scout scan with Scout's columns.

use std::path::{Path, PathBuf};

use coroner::model::Verdict;
use serde_json::Value;

use crate::common::{coroner_in, root, tempdir};

const INSPECT: &[&str] =
    &["samples/inspect/2026-03-01T10-00-00+00-00_shell-puzzles.eval", "samples/inspect/2026-04-10T09-00-00+00-00_shell-puzzles-zstd.eval"];
const ATIF: &[&str] = &["samples/atif/v1.7-embedded.trajectory.json", "samples/atif/v1.8-multimodal.trajectory.json"];

fn verdicts_csv(dir: &Path) -> PathBuf {
    let p = dir.join("verdicts.csv");
    std::fs::write(&p, "task_id,outcome\nv1.7-embedded.trajectory,failed\nv1.8-multimodal.trajectory,failed\nv1.7-embedded,failed\nv1.8-multimodal,failed\n")
        .unwrap();
    p
}

fn classify(inputs: &[&str], extra: &[&str]) -> Vec<Verdict> {
    let tmp = tempdir();
    let out = tmp.path().join("v.jsonl");
    let mut args = vec!["classify"];
    args.extend(inputs);
    args.extend(["-o", out.to_str().unwrap()]);
    args.extend(extra);
    let o = coroner_in(&root(), &args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    coroner::classify::table::read_verdicts(&out).unwrap()
}

/// What must survive the round trip: the label and the steps it points at.
fn essence(v: &Verdict) -> Value {
    let evidence: Vec<(String, Vec<u32>)> = v.evidence.iter().map(|e| (e.rule.clone(), e.steps.clone())).collect();
    serde_json::json!([v.task_id, v.outcome.as_str(), v.primary, v.classes, v.flags, evidence])
}

#[test]
fn atif_round_trip_keeps_the_verdict_and_the_file_valid() {
    let tmp = tempdir();
    let csv = verdicts_csv(tmp.path());
    let out = tmp.path().join("out");
    let before = classify(ATIF, &["--verdicts", csv.to_str().unwrap(), "--emit", "atif", "--emit-dir", out.to_str().unwrap()]);
    assert_eq!(before.len(), 2);
    assert!(before.iter().all(|v| v.primary.is_some() && !v.evidence.is_empty()), "both fail with evidence: {before:?}");

    let annotated: Vec<PathBuf> = ATIF.iter().map(|p| out.join(p)).collect();
    for (path, v) in annotated.iter().zip(&before) {
        let doc: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let original: Value = serde_json::from_slice(&std::fs::read(root().join(path.strip_prefix(&out).unwrap())).unwrap()).unwrap();
        // Nothing but `extra.coroner` changed.
        let mut stripped = doc.clone();
        stripped["extra"].as_object_mut().unwrap().remove("coroner");
        if stripped["extra"].as_object().unwrap().is_empty() && original.get("extra").is_none() {
            stripped.as_object_mut().unwrap().remove("extra");
        }
        assert_eq!(stripped, original, "{}", path.display());
        let c = &doc["extra"]["coroner"];
        assert_eq!(c["primary"].as_str(), v.primary.as_deref());
        assert_eq!(c["trajectory_id"], v.trajectory_id.as_str());
        // Evidence names the file's own step ids, and each names a step of the file (or of the
        // embedded subagent it names).
        let ids = |traj: &Value| traj["steps"].as_array().unwrap().iter().map(|s| s["step_id"].clone()).collect::<Vec<_>>();
        let mut named = 0;
        for e in c["evidence"].as_array().unwrap() {
            for s in e["steps"].as_array().unwrap() {
                named += 1;
                let scope = match s.get("trajectory_id").and_then(Value::as_str) {
                    None => doc.clone(),
                    Some(t) => doc["subagent_trajectories"].as_array().unwrap().iter().find(|x| x["trajectory_id"] == t).cloned().unwrap(),
                };
                assert!(ids(&scope).contains(&s["step_id"]), "{s} in {}", path.display());
            }
        }
        let pointed = v.evidence.iter().any(|e| !e.steps.is_empty());
        assert_eq!(named > 0, pointed, "evidence steps become ATIF step ids: {c}");
    }

    // Read back: the same verdicts.
    let back: Vec<String> = annotated.iter().map(|p| p.to_str().unwrap().to_string()).collect();
    let back: Vec<&str> = back.iter().map(String::as_str).collect();
    let after = classify(&back, &["--verdicts", csv.to_str().unwrap()]);
    assert_eq!(after.iter().map(essence).collect::<Vec<_>>(), before.iter().map(essence).collect::<Vec<_>>());

    // And still ATIF, by Harbor's own models (pinned: tests/python/requirements-atif.txt).
    validate_atif(&annotated);
}

/// Harbor's own models judge the files, strictly; skipped visibly where they are not installed.
fn validate_atif(files: &[PathBuf]) {
    python_check("CORONER_ATIF_PYTHON", "atif_validate.py", files, "the ATIF schema check needs harbor's models");
}

/// Runs a pinned Python validator (`tests/python/SCRIPT`) with the interpreter `.ci/run` names in
/// `env`, and fails on its failure; skipped, visibly, where that interpreter is not set.
fn python_check(env: &str, script: &str, args: &[PathBuf], needs: &str) {
    match std::env::var_os(env).filter(|p| !p.is_empty()) {
        None => eprintln!("SKIPPED: {env} is unset ({needs}; .ci/run installs it)"),
        Some(py) => {
            let o = std::process::Command::new(py)
                .arg(root().join("tests/python").join(script))
                .args(args)
                .output()
                .expect("the validator runs");
            assert!(o.status.success(), "{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        }
    }
}

/// The samples are written from the spec: every ATIF file among them must be one Harbor accepts
/// (a continuation file numbers its steps from 1 again, as Harbor's models require).
#[test]
fn every_atif_sample_is_valid_atif() {
    let mut files = Vec::new();
    let mut stack = vec![root().join("samples")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                // samples/invalid holds broken files on purpose.
                if !p.ends_with("samples/invalid") {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|x| x == "json")
                && std::fs::read(&p)
                    .is_ok_and(|b| b.windows(17).any(|w| w == b"\"schema_version\":") && b.windows(6).any(|w| w == b"\"ATIF-"))
            {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(files.len() >= 90, "the ATIF samples are found: {files:?}");
    validate_atif(&files);
}

#[test]
fn scout_scan_has_scouts_layout_and_columns() {
    let tmp = tempdir();
    let out = tmp.path().join("scans");
    let vs = classify(INSPECT, &["--emit", "scout", "--emit-dir", out.to_str().unwrap()]);
    let scans: Vec<PathBuf> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(scans.len(), 1);
    let dir = &scans[0];
    let name = dir.file_name().unwrap().to_str().unwrap();
    let id = name.strip_prefix("scan_id=").unwrap();
    assert!(id.len() == 22 && id.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c)), "{name}");
    let spec: Value = serde_json::from_slice(&std::fs::read(dir.join("_scan.json")).unwrap()).unwrap();
    assert_eq!(spec["scan_id"], id);
    assert!(spec["scanners"]["coroner"].is_object());
    // All Inspect samples: the transcripts are the samples' uuids, with their logs.
    assert_eq!(spec["transcripts"]["type"], "eval_log");
    let summary: Value = serde_json::from_slice(&std::fs::read(dir.join("_summary.json")).unwrap()).unwrap();
    assert_eq!(summary["complete"], true);
    assert_eq!(summary["scanners"]["coroner"]["results"], vs.len());

    use polars::prelude::*;
    let df = ParquetReader::new(std::fs::File::open(dir.join("coroner.parquet")).unwrap()).finish().unwrap();
    assert_eq!(df.height(), vs.len());
    for col in [
        "transcript_id",
        "transcript_source_type",
        "transcript_source_id",
        "transcript_source_uri",
        "scan_id",
        "scanner_key",
        "input_type",
        "input_ids",
        "input",
        "uuid",
        "value",
        "value_type",
        "explanation",
        "metadata",
        "message_references",
        "event_references",
    ] {
        assert!(df.column(col).is_ok(), "missing column {col}");
    }
    let strs = |c: &str| df.column(c).unwrap().str().unwrap().iter().map(|x| x.unwrap_or_default().to_string()).collect::<Vec<_>>();
    let uuids = strs("uuid");
    let unique: std::collections::BTreeSet<&String> = uuids.iter().collect();
    assert_eq!(unique.len(), uuids.len(), "result ids are unique");
    // Each row's value is its verdict's label, in order.
    let values = strs("value");
    for (v, value) in vs.iter().zip(&values) {
        match &v.primary {
            Some(p) => assert_eq!(value, p),
            None => assert!(["passed", "unknown_outcome", "unclassified"].contains(&value.as_str()), "{value}"),
        }
    }
    for (input, tid) in strs("input").iter().zip(strs("transcript_id")) {
        let i: Value = serde_json::from_str(input).unwrap();
        assert_eq!(i["transcript_id"], tid.as_str());
        assert!(i["messages"].is_array());
    }
    // The same verdicts give the same scan, byte for byte.
    let again = tmp.path().join("again");
    classify(INSPECT, &["--emit", "scout", "--emit-dir", again.to_str().unwrap()]);
    let bytes = |d: &Path| std::fs::read(d.join("coroner.parquet")).unwrap();
    assert_eq!(bytes(dir), bytes(&again.join(name)));

    // And Scout's own readers open it (pinned: tests/python/requirements-scout.txt).
    validate_scout(dir);
}

/// Inspect Scout's own readers open the scan and find coroner's results in it; skipped visibly
/// where Scout is not installed.
fn validate_scout(scan: &Path) {
    python_check("CORONER_SCOUT_PYTHON", "scout_validate.py", &[scan.to_path_buf()], "the Scout read-back needs inspect-scout");
}
