//! Plain verdict files: a CSV with a task column and an outcome column
//! (`task_id,outcome`, `instance_id,resolved`, `results_summary.csv`-style), or JSON mapping
//! task ids to outcomes (`{"t1": "passed"}`, `[{"task_id": "t1", "reward": 1}]`, or a run
//! summary whose `instances` list holds such rows, `results_summary.json`-style).

use serde_json::Value;

use crate::ingest::diag::{InputError, InputErrorKind};
use crate::ingest::format::{Adapter, FileRole, Sniff, marker, structure};
use crate::ingest::join::{JoinEntry, OutcomeFile, Scope};
use crate::ingest::probe::Probe;
use crate::ingest::source::Source;
use crate::model::{Outcome, OutcomeStatus};

/// Column names that hold the task, in order of preference.
const TASK_COLUMNS: &[&str] = &["task_id", "instance_id", "task", "sample_id", "id", "trial_name", "session_id", "name"];
/// Fields of a run summary object that hold its list of verdict rows.
const ROW_LISTS: &[&str] = &["instances"];
/// Column names that hold the verdict.
const OUTCOME_COLUMNS: &[&str] =
    &["outcome", "status", "resolved", "passed", "is_resolved", "success", "result", "verdict", "score", "reward"];

/// Reads a verdict word or number.
#[must_use]
pub fn parse_status(s: &str) -> Option<(OutcomeStatus, Option<f64>)> {
    let t = s.trim().to_ascii_lowercase();
    let status = match t.as_str() {
        "passed" | "pass" | "resolved" | "true" | "yes" | "success" | "succeeded" | "correct" | "c" | "ok" => OutcomeStatus::Passed,
        "failed" | "fail" | "unresolved" | "false" | "no" | "failure" | "incorrect" | "i" | "wrong" => OutcomeStatus::Failed,
        "partial" | "p" => OutcomeStatus::Partial,
        "error" | "errored" | "verifier_error" => OutcomeStatus::Errored,
        "unknown" | "" | "n/a" | "na" | "none" | "null" => OutcomeStatus::Unknown,
        _ => {
            let r: f64 = t.parse().ok()?;
            let o = Outcome::from_reward(r, "", "");
            return Some((o.status, Some(r)));
        }
    };
    Some((status, None))
}

fn entry(key: &str, value: &str, display: &str, field: &str) -> Option<JoinEntry> {
    let (status, reward) = parse_status(value)?;
    let mut o = Outcome::new(status, display, field);
    o.reward = reward.or(match status {
        OutcomeStatus::Passed => Some(1.0),
        OutcomeStatus::Failed => Some(0.0),
        _ => None,
    });
    Some(JoinEntry { key: key.to_string(), outcome: Some(o), ..JoinEntry::default() })
}

pub struct VerdictTable;

impl Adapter for VerdictTable {
    fn name(&self) -> &'static str {
        "verdicts"
    }
    fn role(&self) -> FileRole {
        FileRole::Outcome
    }
    fn describe(&self) -> &'static str {
        "verdict file: CSV or JSON mapping task ids to outcomes"
    }
    fn versions(&self) -> &'static str {
        "any task/outcome CSV or JSON"
    }
    fn sniff(&self, p: &Probe) -> Sniff {
        if p.ext() == "csv" || p.ext() == "tsv" {
            let text = p.text();
            let header = text.lines().next().unwrap_or("").to_ascii_lowercase();
            let cols: Vec<&str> = header.split([',', '\t']).map(|c| c.trim().trim_matches('"')).collect();
            let task = cols.iter().any(|c| TASK_COLUMNS.contains(c));
            let outcome = cols.iter().any(|c| OUTCOME_COLUMNS.contains(c));
            return if task && outcome {
                marker(format!("CSV header {header}"))
            } else {
                Err(format!("CSV header `{header}` has no task and outcome columns"))
            };
        }
        let Some(j) = &p.json else { return Err("not CSV or JSON".into()) };
        if j.top_is_array {
            let task = TASK_COLUMNS.iter().any(|c| j.has(&format!("[].{c}")));
            let outcome = OUTCOME_COLUMNS.iter().any(|c| j.has(&format!("[].{c}")));
            let transcript = j.has("[].traj") || j.has("[].messages") || j.has("[].role") || j.has("[].history");
            if task && outcome && !transcript {
                return structure("list of {task_id, outcome}");
            }
            return Err("array without task and outcome fields".into());
        }
        if let Some(list) = ROW_LISTS.iter().find(|l| j.keys.get(**l) == Some(&super::super::probe::Scalar::Array)) {
            let text = p.text();
            let quoted = |c: &&str| text.contains(&format!("\"{c}\""));
            if TASK_COLUMNS.iter().any(quoted) && OUTCOME_COLUMNS.iter().any(quoted) {
                return structure(format!("run summary: `{list}` rows with a task and an outcome"));
            }
        }
        let top: Vec<&String> = j.keys.keys().filter(|k| !k.contains('.')).collect();
        let all_verdicts = !top.is_empty()
            && top.iter().all(|k| {
                matches!(j.keys.get(*k), Some(super::super::probe::Scalar::Str(s)) if parse_status(s).is_some())
                    || matches!(j.keys.get(*k), Some(super::super::probe::Scalar::Bool(_)))
            });
        if all_verdicts && (p.name.contains("verdict") || p.name.contains("outcome") || p.name.contains("label") || top.len() >= 2) {
            return structure("object mapping ids to verdict words");
        }
        Err("not a verdict table".into())
    }
    fn outcomes(&self, src: &Source) -> Result<OutcomeFile, InputError> {
        let text = src.text()?;
        let mut entries = Vec::new();
        if src.display.ends_with(".csv") || src.display.ends_with(".tsv") {
            let delim = if src.display.ends_with(".tsv") { b'\t' } else { b',' };
            let mut rdr = csv::ReaderBuilder::new().delimiter(delim).flexible(true).from_reader(text.as_bytes());
            let headers: Vec<String> =
                rdr.headers().map_err(|e| csv_error(src, &e))?.iter().map(|h| h.trim().to_ascii_lowercase()).collect();
            let find = |names: &[&str]| names.iter().find_map(|n| headers.iter().position(|h| h == n));
            let (Some(tc), Some(oc)) = (find(TASK_COLUMNS), find(OUTCOME_COLUMNS)) else {
                return Err(InputError::new(
                    InputErrorKind::Schema,
                    &src.display,
                    "read the verdict CSV: no task column and outcome column",
                )
                .with_help(format!("name the columns one of {TASK_COLUMNS:?} and one of {OUTCOME_COLUMNS:?}")));
            };
            for rec in rdr.records() {
                let rec = rec.map_err(|e| csv_error(src, &e))?;
                let (Some(k), Some(v)) = (rec.get(tc), rec.get(oc)) else { continue };
                match entry(k.trim(), v, &src.display, &headers[oc]) {
                    Some(e) => entries.push(e),
                    None => {
                        let line = rec.position().map_or(0, |p| p.line());
                        return Err(InputError::new(InputErrorKind::Schema, &src.display, format!("read the verdict `{v}` for {k}"))
                            .with_help("use passed/failed/partial/errored/unknown, true/false, or a reward between 0 and 1")
                            .at_offset(
                                &src.bytes,
                                crate::ingest::diag::offset_of(&src.bytes, usize::try_from(line).unwrap_or(1), 1),
                                "this row",
                            ));
                    }
                }
            }
        } else {
            let mut v: Value = src.json("verdict file")?;
            if let Some(list) = ROW_LISTS.iter().find(|l| v.get(**l).is_some_and(Value::is_array)) {
                v = v[*list].take();
            }
            match &v {
                Value::Object(m) => {
                    for (k, val) in m {
                        let s = match val {
                            Value::String(s) => s.clone(),
                            Value::Bool(b) => b.to_string(),
                            Value::Number(n) => n.to_string(),
                            _ => continue,
                        };
                        entries.extend(entry(k, &s, &src.display, k));
                    }
                }
                Value::Array(rows) => {
                    for row in rows {
                        let key = TASK_COLUMNS.iter().find_map(|c| row.get(*c).and_then(Value::as_str));
                        let val = OUTCOME_COLUMNS.iter().find_map(|c| row.get(*c).map(|v| (*c, v)));
                        if let (Some(k), Some((field, v))) = (key, val) {
                            let s = match v {
                                Value::String(s) => s.clone(),
                                other => other.to_string(),
                            };
                            entries.extend(entry(k, &s, &src.display, field));
                        }
                    }
                }
                _ => {
                    return Err(InputError::new(
                        InputErrorKind::Schema,
                        &src.display,
                        "read the verdict file: expected an object or a list",
                    ));
                }
            }
        }
        Ok(OutcomeFile { scope: Scope::FileDir, entries, otherwise: None })
    }
}

fn csv_error(src: &Source, e: &csv::Error) -> InputError {
    let err = InputError::new(InputErrorKind::Syntax, &src.display, format!("parse CSV: {e}"));
    match e.position() {
        Some(p) => err.at_offset(&src.bytes, usize::try_from(p.byte()).unwrap_or(0), "here"),
        None => err,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_summary_lists_its_verdicts_under_instances() {
        let text = r#"{"total": 2, "passed": 1, "failed": 1, "pass_rate": 50.0, "instances": [
            {"instance_id": "a__b-1", "resolved": true, "patch_applied": true},
            {"instance_id": "a__b-2", "resolved": false, "patch_applied": true}]}"#;
        let p = Probe::from_prefix(std::path::Path::new("results_summary.json"), text.len() as u64, text.as_bytes().to_vec());
        assert!(VerdictTable.sniff(&p).unwrap().reason.contains("instances"));
        let dir = std::env::temp_dir().join(format!("coroner-summary-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("results_summary.json");
        std::fs::write(&path, text).unwrap();
        let f = VerdictTable.outcomes(&Source::read(&path, "results_summary.json").unwrap()).unwrap();
        let got: Vec<(String, OutcomeStatus)> = f.entries.iter().map(|e| (e.key.clone(), e.outcome.as_ref().unwrap().status)).collect();
        assert_eq!(got, vec![("a__b-1".into(), OutcomeStatus::Passed), ("a__b-2".into(), OutcomeStatus::Failed)]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn verdict_words_and_rewards() {
        assert_eq!(parse_status("Resolved").unwrap().0, OutcomeStatus::Passed);
        assert_eq!(parse_status("I").unwrap().0, OutcomeStatus::Failed);
        assert_eq!(parse_status("0.5").unwrap(), (OutcomeStatus::Partial, Some(0.5)));
        assert!(parse_status("maybe").is_none());
    }
}
