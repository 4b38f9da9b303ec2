//! `classify --emit scout`: the verdicts as an Inspect Scout scan — the directory Scout's own
//! scanners write (`scan_id=<id>/` with `_scan.json`, `_summary.json` and one Parquet file per
//! scanner), with coroner as the one scanner — so `scout view` lists coroner's labels beside
//! the transcripts it scanned itself.
//!
//! Read from inspect_scout 0.6.1/0.6.2 (`_recorder/file.py`, `_recorder/buffer.py`,
//! `_scanner/result.py`, `_scanspec.py`) and its viewer (meridianlabs-ai/ts-mono@4df0a64):
//! the viewer opens only a `scan_id` of exactly 22 characters of `[A-Za-z0-9_.-]`, looks rows up
//! by `uuid`, casts `value` by `value_type`, and reads `input.messages` of a `transcript` row,
//! so those are always written. For an Inspect sample the transcript id is the sample's `uuid`
//! (what Scout itself uses), so the viewer's Transcript button finds it; for other formats it is
//! coroner's trajectory id. Evidence step indexes are coroner's, kept in `metadata` (Scout's
//! references name Inspect message ids, which coroner's records do not keep).
//!
//! Everything is derived from the verdicts: the same verdicts give the same bytes.

use std::path::{Path, PathBuf};

use polars::prelude::*;
use serde_json::{Value, json};

use crate::model::{OutcomeStatus, Trajectory, Verdict};

/// The scanner's key: the Parquet file's name and the key in `_scan.json`'s `scanners`.
const SCANNER: &str = "coroner";

/// What a Scout row needs of the record besides its verdict.
#[derive(Debug, Clone)]
pub struct ScoutSource {
    pub transcript_id: String,
    pub source_type: String,
    pub source_uri: String,
    pub task_repeat: i64,
}

/// The transcript a verdict belongs to, as Scout names it.
#[must_use]
pub fn source(t: &Trajectory) -> ScoutSource {
    let inspect = t.provenance.adapter.starts_with("inspect");
    ScoutSource {
        transcript_id: if inspect { t.session_id.clone().unwrap_or_else(|| t.id.clone()) } else { t.id.clone() },
        source_type: if inspect { "eval_log".to_string() } else { t.provenance.adapter.clone() },
        source_uri: t.provenance.files.first().map(|f| f.path.clone()).unwrap_or_default(),
        task_repeat: i64::from(t.trial) + 1,
    }
}

/// A 22-character id from `seed`, in the alphabet the viewer accepts.
fn short_id(seed: &[u8]) -> String {
    const ALPHABET: &[u8] = b"23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    let digest = crate::util::sha256_hex(seed);
    digest
        .as_bytes()
        .chunks(2)
        .take(22)
        .map(|pair| ALPHABET[usize::from(pair[0] ^ pair[1].rotate_left(3)) % ALPHABET.len()] as char)
        .collect()
}

/// The label Scout shows: the primary class of a failure, else what is known of the outcome.
fn value_of(v: &Verdict) -> String {
    match (&v.primary, v.outcome) {
        (Some(c), _) => c.clone(),
        (None, OutcomeStatus::Passed) => "passed".into(),
        (None, OutcomeStatus::Unknown) => "unknown_outcome".into(),
        (None, _) => "unclassified".into(),
    }
}

fn explanation(v: &Verdict) -> String {
    let mut out = v.reason.clone().unwrap_or_default();
    for e in &v.evidence {
        let steps: Vec<String> = e.steps.iter().map(ToString::to_string).collect();
        let line = format!("- **{}** ({}), steps {}: {}", e.rule, e.supports, steps.join(", "), e.detail.as_deref().unwrap_or(&e.excerpt));
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&line);
    }
    out
}

/// Writes the scan below `dir`; returns its directory.
///
/// # Errors
/// The files cannot be written.
pub fn write(dir: &Path, rows: &[(Verdict, ScoutSource)], rules_digest: &str) -> std::io::Result<PathBuf> {
    let mut seed = rules_digest.as_bytes().to_vec();
    for (v, _) in rows {
        seed.extend(serde_json::to_vec(v).map_err(std::io::Error::other)?);
    }
    let scan_id = short_id(&seed);
    let scan_dir = dir.join(format!("scan_id={scan_id}"));
    std::fs::create_dir_all(&scan_dir)?;
    let inspect_only = !rows.is_empty() && rows.iter().all(|(_, s)| s.source_type == "eval_log");
    let mut spec = json!({
        "scan_id": scan_id,
        "scan_name": "coroner",
        // Fixed, so the same verdicts give the same bytes: the scan's time is its inputs'.
        "timestamp": "1970-01-01T00:00:00+00:00",
        "packages": { "coroner": env!("CARGO_PKG_VERSION") },
        "scanners": { SCANNER: { "name": "coroner", "version": 0, "package_version": env!("CARGO_PKG_VERSION"),
            "params": { "rules_digest": rules_digest } } },
    });
    if inspect_only {
        let ids: serde_json::Map<String, Value> = rows.iter().map(|(_, s)| (s.transcript_id.clone(), json!(s.source_uri))).collect();
        spec["transcripts"] = json!({ "type": "eval_log", "transcript_ids": ids });
    }
    write_json(&scan_dir.join("_scan.json"), &spec)?;
    let n = rows.len();
    let summary = json!({ "complete": true, "scanners": { SCANNER: {
        "scans": n, "results": n, "errors": 0, "tokens": 0, "validation": null, "metrics": null, "model_usage": {} } } });
    write_json(&scan_dir.join("_summary.json"), &summary)?;
    let mut df = frame(rows, &scan_id).map_err(std::io::Error::other)?;
    let f = std::fs::File::create(scan_dir.join(format!("{SCANNER}.parquet")))?;
    // The footer's Arrow schema says `large_string` where polars would say `string_view`: the
    // bytes are the same UTF-8 either way, and Scout's pyarrow compute kernels (`equal` on a
    // scan's columns) have no string-view form.
    let arrow = df.schema().to_arrow(CompatLevel::oldest());
    let key = polars_parquet::write::schema_to_metadata_key(&arrow);
    ParquetWriter::new(f)
        .with_key_value_metadata(Some(polars::io::parquet::write::KeyValueMetadata::Static(vec![key])))
        .finish(&mut df)
        .map(|_| ())
        .map_err(std::io::Error::other)?;
    Ok(scan_dir)
}

fn write_json(path: &Path, v: &Value) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec_pretty(v).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    std::fs::write(path, bytes)
}

/// The results table: Scout's columns, one row per verdict.
fn frame(rows: &[(Verdict, ScoutSource)], scan_id: &str) -> PolarsResult<DataFrame> {
    let s = |f: &dyn Fn(&Verdict, &ScoutSource) -> String| rows.iter().map(|(v, src)| f(v, src)).collect::<Vec<String>>();
    let none = || vec![None::<String>; rows.len()];
    let cols = vec![
        Column::new("transcript_id".into(), s(&|_, x| x.transcript_id.clone())),
        Column::new("transcript_source_type".into(), s(&|_, x| x.source_type.clone())),
        Column::new("transcript_source_id".into(), s(&|v, _| v.trajectory_id.clone())),
        Column::new("transcript_source_uri".into(), s(&|_, x| x.source_uri.clone())),
        Column::new("transcript_task_id".into(), s(&|v, _| v.task_id.clone())),
        Column::new("transcript_task_repeat".into(), rows.iter().map(|(_, x)| x.task_repeat).collect::<Vec<i64>>()),
        Column::new("transcript_agent".into(), s(&|v, _| v.harness.clone())),
        Column::new("transcript_model".into(), rows.iter().map(|(v, _)| v.model.clone()).collect::<Vec<Option<String>>>()),
        Column::new(
            "transcript_success".into(),
            rows.iter()
                .map(|(v, _)| match v.outcome {
                    OutcomeStatus::Passed => Some(true),
                    OutcomeStatus::Failed | OutcomeStatus::Errored => Some(false),
                    _ => None,
                })
                .collect::<Vec<Option<bool>>>(),
        ),
        Column::new("scan_id".into(), s(&|_, _| scan_id.to_string())),
        Column::new("scanner_key".into(), s(&|_, _| SCANNER.to_string())),
        Column::new("scanner_name".into(), s(&|_, _| SCANNER.to_string())),
        Column::new("input_type".into(), s(&|_, _| "transcript".to_string())),
        Column::new("input_ids".into(), s(&|_, x| json!([x.transcript_id]).to_string())),
        Column::new(
            "input".into(),
            s(&|v, x| {
                json!({ "transcript_id": x.transcript_id, "source_type": x.source_type, "source_id": v.trajectory_id,
                    "source_uri": x.source_uri, "messages": [], "events": [] })
                .to_string()
            }),
        ),
        Column::new("input_data".into(), none()),
        Column::new("uuid".into(), s(&|v, _| short_id(format!("{scan_id}/{}", v.trajectory_id).as_bytes()))),
        Column::new("label".into(), none()),
        Column::new("value".into(), s(&|v, _| value_of(v))),
        Column::new("value_type".into(), s(&|_, _| "string".to_string())),
        Column::new("answer".into(), none()),
        Column::new("explanation".into(), s(&|v, _| explanation(v))),
        Column::new(
            "metadata".into(),
            s(&|v, _| {
                json!({ "outcome": v.outcome.as_str(), "classes": v.classes, "flags": v.flags, "evidence": v.evidence,
                    "trajectory_id": v.trajectory_id })
                .to_string()
            }),
        ),
        Column::new("message_references".into(), s(&|_, _| "[]".to_string())),
        Column::new("event_references".into(), s(&|_, _| "[]".to_string())),
        Column::new("scan_error".into(), none()),
        Column::new("scan_error_traceback".into(), none()),
        Column::new("scan_error_type".into(), none()),
        Column::new("scan_total_tokens".into(), vec![0i64; rows.len()]),
        Column::new("scan_model_usage".into(), s(&|_, _| "{}".to_string())),
        Column::new("scan_events".into(), s(&|_, _| "[]".to_string())),
        Column::new("timestamp".into(), s(&|_, _| "1970-01-01T00:00:00+00:00".to_string())),
    ];
    DataFrame::new_infer_height(cols)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_ids_are_22_characters_the_viewer_accepts() {
        for seed in [&b""[..], b"a", b"coroner"] {
            let id = short_id(seed);
            assert_eq!(id.len(), 22);
            assert!(id.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c)), "{id}");
        }
        assert_ne!(short_id(b"a"), short_id(b"b"));
    }
}
