//! SWE-bench verdicts and batch files: per-instance `report.json`, the run report of the
//! SWE-bench harness and sb-cli (`resolved_ids`, ...), predictions (`preds.json`,
//! `all_preds.jsonl`), and mini-swe-agent's `exit_statuses_*.yaml`.

use std::path::Path;

use serde_json::Value;

use crate::ingest::diag::{InputError, InputErrorKind};
use crate::ingest::format::{Adapter, FileRole, Sniff, file_name, marker, structure};
use crate::ingest::join::{JoinEntry, OutcomeFile, Scope};
use crate::ingest::probe::{Probe, Scalar};
use crate::ingest::source::Source;
use crate::model::{Outcome, OutcomeStatus, TestResult};

/// Verdicts under `<root>/logs/...` apply to the whole run rooted at `<root>`.
fn scope_for(path: &Path) -> Scope {
    let logs = path.ancestors().skip(1).find(|a| a.file_name().is_some_and(|n| n == "logs"));
    match logs.and_then(Path::parent) {
        Some(root) => Scope::Dir(root.to_path_buf()),
        None => Scope::FileDir,
    }
}

/// Per-instance `report.json` written by the SWE-bench harness, wrapped
/// (`{"<instance>": {...}}`) or bare (`{"resolved": ..., "tests_status": ...}`, named by its
/// directory).
pub struct SweBenchReport;

impl Adapter for SweBenchReport {
    fn name(&self) -> &'static str {
        "swebench-report"
    }
    fn role(&self) -> FileRole {
        FileRole::Outcome
    }
    fn describe(&self) -> &'static str {
        "SWE-bench per-instance report.json"
    }
    fn versions(&self) -> &'static str {
        "harness report.json, wrapped or bare"
    }
    fn sniff(&self, p: &Probe) -> Sniff {
        let Some(j) = &p.json else { return Err("not JSON".into()) };
        if j.has("resolved") && (j.has("tests_status") || j.has("patch_successfully_applied")) {
            return marker("bare instance report (resolved, tests_status)");
        }
        let wrapped = j.keys.keys().any(|k| k.ends_with(".resolved"))
            && j.keys.keys().any(|k| k.ends_with(".tests_status") || k.ends_with(".patch_is_None"));
        if wrapped {
            return marker("instance report keyed by instance id (resolved, tests_status)");
        }
        Err("no resolved/tests_status".into())
    }
    fn outcomes(&self, src: &Source) -> Result<OutcomeFile, InputError> {
        let v: Value = src.json("SWE-bench report")?;
        let Value::Object(map) = &v else {
            return Err(InputError::new(InputErrorKind::Schema, &src.display, "read the SWE-bench report: the top level is not an object"));
        };
        let mut entries = Vec::new();
        if map.contains_key("resolved") {
            let key = src.path.parent().and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            entries.push(instance_entry(&key, &v, &src.display, "resolved"));
        } else {
            for (k, inst) in map {
                if inst.get("resolved").is_some() {
                    entries.push(instance_entry(k, inst, &src.display, &format!("{k}.resolved")));
                }
            }
        }
        Ok(OutcomeFile { scope: scope_for(&src.path), entries, otherwise: None })
    }
}

fn instance_entry(key: &str, inst: &Value, display: &str, field: &str) -> JoinEntry {
    let resolved = inst.get("resolved").and_then(Value::as_bool).unwrap_or(false);
    let mut o = Outcome::new(if resolved { OutcomeStatus::Passed } else { OutcomeStatus::Failed }, display, field);
    o.reward = Some(if resolved { 1.0 } else { 0.0 });
    if inst.get("patch_is_None").and_then(Value::as_bool) == Some(true) || inst.get("patch_exists").and_then(Value::as_bool) == Some(false)
    {
        o.detail = Some("no patch was submitted".into());
    } else if inst.get("patch_successfully_applied").and_then(Value::as_bool) == Some(false) {
        o.detail = Some("the patch did not apply".into());
    }
    if let Some(ts) = inst.get("tests_status").and_then(Value::as_object) {
        for (group, res) in ts {
            for (status, key) in [("passed", "success"), ("failed", "failure")] {
                for name in res.get(key).and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
                    o.tests.push(TestResult::new(format!("{group}: {name}"), status));
                }
            }
        }
    }
    JoinEntry { key: key.to_string(), outcome: Some(o), ..JoinEntry::default() }
}

/// The run report of the SWE-bench harness (`<model>.<run_id>.json`) and of sb-cli: lists of
/// instance ids by result.
pub struct SweBenchRunReport;

/// One list of instance ids in a verdict file: its key, the status it gives, the detail it says
/// (may be empty), and whether its instances submitted nothing.
type IdList = (&'static str, OutcomeStatus, &'static str, bool);

const ID_LISTS: &[IdList] = &[
    ("resolved_ids", OutcomeStatus::Passed, "", false),
    // Multi-SWE-bench's copy of the sb-cli report names its resolved list as the experiments
    // repository does.
    ("resolved", OutcomeStatus::Passed, "", false),
    ("unresolved_ids", OutcomeStatus::Failed, "", false),
    ("empty_patch_ids", OutcomeStatus::Failed, "empty patch", true),
    // Multi-SWE-bench: empty patches and patches that did not apply, in one list, so not
    // evidence that nothing was submitted.
    ("empty_error_patch_ids", OutcomeStatus::Failed, "an empty patch or one the evaluation could not apply", false),
    ("error_ids", OutcomeStatus::Errored, "", false),
];

/// An entry per instance id of each list, the first list naming an id deciding, keyed by the id.
fn id_list_entries(root: &Value, lists: &[IdList], display: &str) -> Vec<JoinEntry> {
    let mut entries: Vec<JoinEntry> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (list, status, detail, empty) in lists {
        for id in root.get(*list).and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
            if !seen.insert(id.to_string()) {
                continue;
            }
            let mut o = Outcome::new(*status, display, *list);
            o.reward = match status {
                OutcomeStatus::Passed => Some(1.0),
                OutcomeStatus::Failed => Some(0.0),
                _ => None,
            };
            o.detail = (!detail.is_empty()).then(|| (*detail).to_string());
            entries.push(JoinEntry { key: id.to_string(), outcome: Some(o), submission: empty.then(String::new), ..JoinEntry::default() });
        }
    }
    entries
}

impl Adapter for SweBenchRunReport {
    fn name(&self) -> &'static str {
        "swebench-run-report"
    }
    fn role(&self) -> FileRole {
        FileRole::Outcome
    }
    fn describe(&self) -> &'static str {
        "SWE-bench harness or sb-cli run report (resolved_ids, unresolved_ids, ...)"
    }
    fn versions(&self) -> &'static str {
        "harness run report and sb-cli report"
    }
    fn sniff(&self, p: &Probe) -> Sniff {
        let Some(j) = &p.json else { return Err("not JSON".into()) };
        if j.has("resolved_ids") || j.has("unresolved_ids") || j.has("results.resolved_ids") {
            return marker("resolved_ids / unresolved_ids lists");
        }
        Err("no resolved_ids".into())
    }
    fn outcomes(&self, src: &Source) -> Result<OutcomeFile, InputError> {
        let v: Value = src.json("SWE-bench run report")?;
        let root = v.get("results").filter(|r| r.get("resolved_ids").is_some()).unwrap_or(&v);
        Ok(OutcomeFile { scope: submission_scope(src), entries: id_list_entries(root, ID_LISTS, &src.display), otherwise: None })
    }
}

/// A SWE-bench leaderboard submission's `results/results.json` (swe-bench/experiments):
/// instance ids by result, `resolved` among them. The newer files list only `resolved`,
/// `no_generation` and `no_logs`, so an instance of the submission named nowhere failed; the
/// older ones add `generated`, `applied`, `install_fail`, `test_errored`, ... . It applies to
/// the submission's directory (the parent of `results/`).
pub struct SweBenchExperimentsResults;

/// The lists that decide, first match winning; `generated`, `with_logs` and `applied` only say
/// how far an instance got.
const RESULT_LISTS: &[IdList] = &[
    ("resolved", OutcomeStatus::Passed, "", false),
    ("no_logs", OutcomeStatus::Errored, "no evaluation logs: the verifier gave no verdict", false),
    ("install_fail", OutcomeStatus::Errored, "the evaluation environment failed to install", false),
    ("reset_failed", OutcomeStatus::Errored, "the evaluation could not reset the repository", false),
    ("test_errored", OutcomeStatus::Errored, "the tests errored", false),
    ("test_timeout", OutcomeStatus::Errored, "the tests timed out", false),
    ("no_generation", OutcomeStatus::Failed, "no patch was generated", false),
    ("no_apply", OutcomeStatus::Failed, "the patch did not apply", false),
];

impl Adapter for SweBenchExperimentsResults {
    fn name(&self) -> &'static str {
        "swebench-experiments-results"
    }
    fn role(&self) -> FileRole {
        FileRole::Outcome
    }
    fn describe(&self) -> &'static str {
        "SWE-bench leaderboard submission results/results.json (resolved, no_generation, no_logs, ...)"
    }
    fn versions(&self) -> &'static str {
        "results.json, 3 or 10 id lists"
    }
    fn sniff(&self, p: &Probe) -> Sniff {
        let Some(j) = &p.json else { return Err("not JSON".into()) };
        let listed = ["no_generation", "no_logs", "generated", "applied"].iter().any(|k| j.keys.get(*k) == Some(&Scalar::Array));
        if j.keys.get("resolved") == Some(&Scalar::Array) && listed {
            return marker("resolved and no_generation/no_logs id lists");
        }
        Err("no resolved id list beside no_generation/no_logs".into())
    }
    fn outcomes(&self, src: &Source) -> Result<OutcomeFile, InputError> {
        let v: Value = src.json("SWE-bench experiments results")?;
        let entries = id_list_entries(&v, RESULT_LISTS, &src.display);
        let mut otherwise = Outcome::new(OutcomeStatus::Failed, src.display.clone(), "resolved");
        otherwise.reward = Some(0.0);
        otherwise.detail = Some("not among the resolved instances".into());
        Ok(OutcomeFile { scope: submission_scope(src), entries, otherwise: Some(otherwise) })
    }
}

/// A leaderboard submission's `results/` file applies to the submission's directory (its
/// `trajs/` beside `results/`); any other verdict file to its own directory.
fn submission_scope(src: &Source) -> Scope {
    let submission = src.path.parent().filter(|d| d.file_name().is_some_and(|n| n == "results")).and_then(Path::parent);
    submission.map_or(Scope::FileDir, |d| Scope::Dir(d.to_path_buf()))
}

/// SWE-bench predictions: `preds.json` (`{id: {model_patch, ...}}`) or `all_preds.jsonl`.
pub struct Predictions;

impl Adapter for Predictions {
    fn name(&self) -> &'static str {
        "swebench-preds"
    }
    fn role(&self) -> FileRole {
        FileRole::Outcome
    }
    fn describe(&self) -> &'static str {
        "SWE-bench predictions (preds.json, all_preds.jsonl): the submitted patch per instance"
    }
    fn versions(&self) -> &'static str {
        "preds.json, all_preds.jsonl, .pred"
    }
    fn sniff(&self, p: &Probe) -> Sniff {
        if let Some(j) = &p.jsonl
            && j.has("instance_id")
            && j.has("model_patch")
        {
            return marker("JSON Lines with instance_id and model_patch");
        }
        let Some(j) = &p.json else { return Err("not JSON".into()) };
        if j.keys.keys().any(|k| k.ends_with(".model_patch")) || (j.top_is_array && j.has("[].model_patch")) {
            return marker("model_patch per instance");
        }
        if j.has("instance_id") && j.has("model_patch") {
            return marker("one prediction (instance_id, model_patch)");
        }
        if p.name == "preds.json" {
            return file_name("preds.json");
        }
        Err("no model_patch".into())
    }
    fn outcomes(&self, src: &Source) -> Result<OutcomeFile, InputError> {
        let text = src.text()?;
        let mut entries = Vec::new();
        let mut push = |v: &Value, key: Option<&str>| {
            let id = v.get("instance_id").and_then(Value::as_str).or(key);
            if let Some(id) = id {
                let patch = v.get("model_patch").map(|p| p.as_str().unwrap_or("").to_string()).unwrap_or_default();
                entries.push(JoinEntry { key: id.to_string(), submission: Some(patch), ..JoinEntry::default() });
            }
        };
        if text.trim_start().starts_with('[') || !text.trim_end().contains('\n') || src.display.ends_with(".json") {
            let v: Value = src.json("SWE-bench predictions")?;
            match &v {
                // A single prediction (SWE-agent's per-instance `<id>.pred`).
                Value::Object(m) if m.contains_key("instance_id") && m.contains_key("model_patch") => push(&v, None),
                Value::Object(m) => m.iter().for_each(|(k, p)| push(p, Some(k))),
                Value::Array(a) => a.iter().for_each(|p| push(p, None)),
                _ => {}
            }
        } else {
            let mut offset = 0;
            for line in text.split_inclusive('\n') {
                if !line.trim().is_empty() {
                    let v: Value = serde_json::from_str(line)
                        .map_err(|e| InputError::from_json_at(&src.display, &src.bytes, offset, "prediction line", &e))?;
                    push(&v, None);
                }
                offset += line.len();
            }
        }
        Ok(OutcomeFile { scope: Scope::FileDir, entries, otherwise: None })
    }
}

/// mini-swe-agent's batch `exit_statuses_<time>.yaml`: `instances_by_exit_status: {status: [ids]}`.
pub struct ExitStatuses;

impl Adapter for ExitStatuses {
    fn name(&self) -> &'static str {
        "mini-swe-agent-exit-statuses"
    }
    fn role(&self) -> FileRole {
        FileRole::Outcome
    }
    fn describe(&self) -> &'static str {
        "mini-swe-agent batch exit statuses (exit_statuses_*.yaml)"
    }
    fn versions(&self) -> &'static str {
        "instances_by_exit_status (mini 1.x)"
    }
    fn sniff(&self, p: &Probe) -> Sniff {
        if matches!(p.ext(), "yaml" | "yml") && p.text().contains("instances_by_exit_status") {
            return marker("instances_by_exit_status");
        }
        if p.name.starts_with("exit_statuses_") && matches!(p.ext(), "yaml" | "yml") {
            return structure("exit_statuses_*.yaml");
        }
        Err("no instances_by_exit_status".into())
    }
    fn outcomes(&self, src: &Source) -> Result<OutcomeFile, InputError> {
        let text = src.text()?;
        if let Some(at) = crate::util::yaml_too_deep(text) {
            return Err(too_deep(src, at));
        }
        let v: serde_yaml_ng::Value = serde_yaml_ng::from_str(text).map_err(|e| yaml_error(src, &e))?;
        let mut entries = Vec::new();
        if let Some(map) = v.get("instances_by_exit_status").and_then(serde_yaml_ng::Value::as_mapping) {
            for (status, ids) in map {
                let Some(status) = status.as_str() else { continue };
                for id in ids.as_sequence().into_iter().flatten().filter_map(serde_yaml_ng::Value::as_str) {
                    entries.push(JoinEntry { key: id.to_string(), exit_status: Some(status.to_string()), ..JoinEntry::default() });
                }
            }
        } else {
            return Err(InputError::new(InputErrorKind::Schema, &src.display, "read exit statuses: no `instances_by_exit_status` mapping"));
        }
        Ok(OutcomeFile { scope: Scope::FileDir, entries, otherwise: None })
    }
}

/// YAML nested past [`crate::util::YAML_MAX_DEPTH`], refused before it is parsed.
#[must_use]
pub fn too_deep(src: &Source, at: usize) -> InputError {
    InputError::new(InputErrorKind::Syntax, &src.display, format!("parse YAML: nested deeper than {} levels", crate::util::YAML_MAX_DEPTH))
        .at_offset(&src.bytes, at, "too deep")
        .with_help("no real file nests this deep; it was refused without being parsed")
}

/// A YAML error with its position.
#[must_use]
pub fn yaml_error(src: &Source, e: &serde_yaml_ng::Error) -> InputError {
    let msg = e.to_string();
    let err = InputError::new(InputErrorKind::Syntax, &src.display, format!("parse YAML: {msg}"));
    match e.location() {
        Some(loc) => err.at_offset(&src.bytes, loc.index(), "here"),
        None => err,
    }
}
