//! Terminal-Bench 1 runs: trial `results.json`, the run's `run_metadata.json` and its
//! run-level `results.json`.
//!
//! A run directory is `runs/<run_id>/` with `run_metadata.json` (agent, model, dataset), a
//! run-level `results.json` (every trial result again, plus aggregates) and one directory per
//! trial, `<task>/<trial_name>/` (or flat, `<trial_name>/`), holding the trial's `results.json`,
//! `commands.txt` (the harness's keystrokes) and the terminal capture (`sessions/agent.log`,
//! `agent.cast`). The trial result is the primary file and claims everything in its
//! directory plus the run's two files, so nothing is counted twice. The run-level file yields
//! records only for trials whose directory is absent (a published run without trial dirs).
//! Trials of installed CLI agents keep no structured trajectory, only the terminal capture; the
//! record then has no steps and says so.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::ingest::adapters::shared::build::to_u32;
use crate::ingest::diag::InputError;
use crate::ingest::format::{Adapter, Ctx, FileRole, FileSet, Output, Sniff, Unit, file_name, marker};
use crate::ingest::probe::Probe;
use crate::ingest::source::Source;
use crate::model::{Outcome, OutcomeStatus, SourceFile, TestResult, Trajectory};
use crate::util::seconds_between;

const TRIAL: &str = "terminal-bench";
const RUN: &str = "terminal-bench-run";
const RUN_METADATA: &str = "terminal-bench-run-metadata";
const CAPTURE: &str = "terminal-bench-capture";

/// One trial's `TrialResults`, current (timestamps, `id`) and older (`uuid`, no timestamps).
#[derive(Deserialize)]
struct RawTrial {
    trial_name: String,
    task_id: String,
    #[serde(default)]
    is_resolved: Option<bool>,
    #[serde(default)]
    failure_mode: Option<String>,
    #[serde(default)]
    parser_results: Option<serde_json::Map<String, Value>>,
    #[serde(default)]
    total_input_tokens: Option<u64>,
    #[serde(default)]
    total_output_tokens: Option<u64>,
    #[serde(default)]
    trial_started_at: Option<String>,
    #[serde(default)]
    trial_ended_at: Option<String>,
    #[serde(default)]
    agent_started_at: Option<String>,
    #[serde(default)]
    agent_ended_at: Option<String>,
}

/// The run-level `results.json` (`BenchmarkResults`): the trial results again and aggregates.
#[derive(Deserialize)]
struct RawRun<'a> {
    #[serde(borrow, default)]
    results: Vec<&'a RawValue>,
}

/// `run_metadata.json` (`RunMetadata`), read for the agent and model of the run's trials.
#[derive(Deserialize)]
struct RawRunMetadata {
    run_id: String,
    #[serde(default)]
    agent_name: Option<String>,
    #[serde(default)]
    model_name: Option<String>,
    #[serde(default)]
    dataset_name: Option<String>,
    #[serde(default)]
    dataset_version: Option<String>,
}

/// A trial result that names no failure: `FailureMode`'s default (`unset`) and its value for
/// a clean run (`none`), as absent as a null. What each failure means is in
/// rules/harnesses/terminal-bench.toml; here it only says whether a null `is_resolved` is a
/// verdict the trial never reached.
fn is_clean(mode: Option<&str>) -> bool {
    matches!(mode, None | Some("unset" | "none"))
}

/// `<task>.<N>-of-<M>.<run_id>` (the harness's trial name) → (N - 1, run id).
fn parse_trial_name(name: &str) -> (Option<u32>, Option<&str>) {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| regex::Regex::new(r"\.(\d+)-of-\d+(?:\.(.+))?$").expect("static regex"));
    let Some(c) = re.captures(name) else { return (None, None) };
    let n = c.get(1).and_then(|m| m.as_str().parse::<u32>().ok()).map(|n| n.saturating_sub(1));
    (n, c.get(2).map(|m| m.as_str()))
}

pub(crate) fn looks_like_trial_dir(name: &str) -> bool {
    parse_trial_name(name).0.is_some()
}

/// Builds the record for one trial result; `file` is the file the result was read from.
fn record(trial: &RawTrial, shown: &str, files: Vec<SourceFile>, meta: Option<&RawRunMetadata>, adapter: &str) -> Trajectory {
    let harness = meta.and_then(|m| m.agent_name.clone()).unwrap_or_else(|| "unknown".into());
    let mut t = crate::model::Trajectory::new(trial.task_id.clone(), harness, adapter, 1, files);
    t.provenance.format_version =
        Some(if trial.trial_started_at.is_some() { "terminal-bench-1".into() } else { "terminal-bench-1 (no timestamps)".into() });
    t.model = meta.and_then(|m| m.model_name.clone());
    if meta.is_none() {
        t.notes.push("no run_metadata.json for this trial's run: the agent and model are unknown".into());
    }
    if let Some((d, v)) = meta.and_then(|m| Some((m.dataset_name.as_ref()?, &m.dataset_version))) {
        t.notes.push(format!("dataset {d}{}", v.as_ref().map(|v| format!("@{v}")).unwrap_or_default()));
    }
    let (index, _) = parse_trial_name(&trial.trial_name);
    t.trial = index.unwrap_or(0);
    t.session_id = Some(trial.trial_name.clone());
    t.started_at = trial.trial_started_at.clone();
    t.ended_at = trial.trial_ended_at.clone();
    let agent_secs = trial.agent_started_at.as_deref().zip(trial.agent_ended_at.as_deref()).and_then(|(a, b)| seconds_between(a, b));
    t.usage.wall_seconds = agent_secs;
    // Installed agents report 0 tokens when they do not count them; 0 is "not reported".
    t.usage.prompt_tokens = trial.total_input_tokens.filter(|n| *n > 0);
    t.usage.completion_tokens = trial.total_output_tokens.filter(|n| *n > 0);
    if trial.total_input_tokens == Some(0) && trial.total_output_tokens.is_none_or(|n| n == 0) {
        t.notes.push("total_input_tokens is 0: the agent did not report its token use".into());
    }

    let mode = trial.failure_mode.as_deref();
    if let Some(m) = mode {
        t.signals.status("failure_mode", m);
    }
    t.signals.consumed.wall_seconds = agent_secs;

    let mut o = match trial.is_resolved {
        Some(true) => Outcome::from_reward(1.0, shown, "is_resolved"),
        Some(false) => Outcome::from_reward(0.0, shown, "is_resolved"),
        None if !is_clean(mode) => {
            let mut o = Outcome::new(OutcomeStatus::Errored, shown, "is_resolved");
            o.detail = Some(format!("no verdict: is_resolved is null and the trial ended with {}", mode.unwrap_or_default()));
            o
        }
        None => {
            let mut o = Outcome::new(OutcomeStatus::Unknown, shown, "is_resolved");
            o.detail = Some("is_resolved is null".into());
            o
        }
    };
    o.tests = trial
        .parser_results
        .iter()
        .flatten()
        .map(|(name, v)| TestResult::new(name.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_ascii_lowercase)))
        .collect();
    t.outcome = o;
    t
}

/// Marks the capture's log lines stamped (`HH:MM:SS` first, as OpenHands and LiteLLM log, in the
/// container's UTC) later than the agent phase's end: the runner had stopped waiting for the agent
/// by then, so what they say did not end the phase. A line within two seconds is the agent's exit
/// racing the runner's clock, and is kept; the times carry no date, so only a line up to six hours
/// after the end counts as after it.
fn mark_after_agent(t: &mut Trajectory, agent_ended_at: Option<&str>) {
    const SLACK: i64 = 2;
    const DAY: i64 = 86_400;
    let Some(end) = agent_ended_at.and_then(crate::util::parse_time) else { return };
    let end = end.as_second().rem_euclid(DAY);
    let stamp = |text: &str| -> Option<i64> {
        let t: jiff::civil::Time = text.get(..8)?.parse().ok()?;
        Some(i64::from(t.hour()) * 3600 + i64::from(t.minute()) * 60 + i64::from(t.second()))
    };
    for s in t.signals.log_lines.iter_mut().filter(|s| s.field == super::terminal_capture::LOG) {
        if let Some(at) = stamp(&s.text)
            && (SLACK + 1..6 * 3600).contains(&(at - end).rem_euclid(DAY))
        {
            crate::model::AFTER_AGENT.clone_into(&mut s.field);
        }
    }
}

/// The trial's directory and the run directory above it (`<run>/<task>/<trial>/` or
/// `<run>/<trial>/`), recognized by the run's own files.
fn run_dir(trial_file: &Path, files: &FileSet) -> Option<PathBuf> {
    let trial_dir = trial_file.parent()?;
    let up1 = trial_dir.parent()?;
    let candidates = [Some(up1), up1.parent()];
    candidates
        .into_iter()
        .flatten()
        .find(|d| has(files, &d.join("results.json"), RUN) || has(files, &d.join("run_metadata.json"), RUN_METADATA))
        .map(Path::to_path_buf)
}

fn has(files: &FileSet, p: &Path, adapter: &str) -> bool {
    files.get(p).is_some_and(|a| *a == Some(adapter))
}

fn read_metadata(p: &Path) -> Option<(RawRunMetadata, SourceFile)> {
    let shown = crate::util::display_path(p);
    let src = Source::read(p, &shown).ok()?;
    let m: RawRunMetadata = src.json("Terminal-Bench run metadata").ok()?;
    Some((m, src.provenance("run_metadata")))
}

/// The run's `run_metadata.json`: in the run directory; otherwise, for trials copied out of
/// their run, one in a sibling directory whose `run_id` ends the trial name.
fn find_metadata(trial_file: &Path, trial_name: Option<&str>, files: &FileSet) -> Option<PathBuf> {
    let trial_dir = trial_file.parent()?;
    for d in trial_dir.ancestors().skip(1).take(2) {
        let p = d.join("run_metadata.json");
        if has(files, &p, RUN_METADATA) {
            return Some(p);
        }
    }
    let run_id = parse_trial_name(trial_name?).1?;
    let parent = trial_dir.parent()?;
    files
        .range(parent.to_path_buf()..)
        .take_while(|(p, _)| p.starts_with(parent))
        .filter(|(p, a)| **a == Some(RUN_METADATA) && p.parent().and_then(Path::parent) == Some(parent))
        .map(|(p, _)| p)
        .find(|p| read_metadata(p).is_some_and(|(m, _)| m.run_id == run_id))
        .cloned()
}

/// Reads the trial name from a trial directory's name, which the harness sets to it.
fn dir_name(p: &Path) -> Option<String> {
    p.parent()?.file_name().map(|n| n.to_string_lossy().into_owned())
}

/// A Terminal-Bench 1 trial directory, read through its `results.json`.
pub struct TerminalBenchTrial;

impl Adapter for TerminalBenchTrial {
    fn name(&self) -> &'static str {
        TRIAL
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "Terminal-Bench 1 trial (results.json + run_metadata.json + terminal capture)"
    }

    fn versions(&self) -> &'static str {
        "Terminal-Bench 1 (older uuid + current)"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let Some(j) = &p.json else { return Err("not JSON".into()) };
        if j.top_is_array {
            return Err("a list, not a trial result".into());
        }
        if j.has("trial_name") && j.has("task_id") && (j.has("is_resolved") || j.has("failure_mode") || j.has("parser_results")) {
            return marker("trial result (trial_name, task_id, is_resolved/failure_mode)");
        }
        Err("no trial_name/task_id/is_resolved".into())
    }

    fn companions(&self, primary: &Path, files: &FileSet) -> Vec<PathBuf> {
        let Some(dir) = primary.parent() else { return Vec::new() };
        let mut out: Vec<PathBuf> = files
            .range(dir.to_path_buf()..)
            .take_while(|(p, _)| p.starts_with(dir))
            .map(|(p, _)| p.clone())
            .filter(|p| p != primary)
            .collect();
        if let Some(run) = run_dir(primary, files) {
            let r = run.join("results.json");
            if has(files, &r, RUN) {
                out.push(r);
            }
        }
        if let Some(m) = find_metadata(primary, dir_name(primary).as_deref(), files) {
            out.push(m);
        }
        out
    }

    fn parse(&self, unit: &Unit, ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        let src = Source::read(&unit.primary.path, &unit.primary.display)?;
        let trial: RawTrial = src.json("Terminal-Bench trial result")?;
        let mut files = vec![src.provenance("trial_result")];
        let meta = find_metadata(&unit.primary.path, Some(&trial.trial_name), ctx.files).and_then(|p| read_metadata(&p));
        if let Some((_, f)) = &meta {
            files.push(f.clone());
        }
        let mut t = record(&trial, &unit.primary.display, files, meta.as_ref().map(|(m, _)| m), self.name());
        let dir = unit.primary.path.parent().unwrap_or(Path::new(""));
        let capture: Vec<String> = unit
            .companions
            .iter()
            .filter(|c| c.path.starts_with(dir) && ctx.files.get(&c.path) == Some(&Some(CAPTURE)))
            .map(|c| c.path.strip_prefix(dir).map_or_else(|_| c.display.clone(), crate::util::display_path))
            .collect();
        let agent_log = unit.companions.iter().find(|c| c.path == dir.join("sessions").join("agent.log"));
        if capture.is_empty() {
            t.notes.push("the trial directory holds no agent log or terminal capture: the record has no steps".into());
        } else if let Some(log) = agent_log {
            t.notes.push(format!("the trajectory is read from the terminal capture ({})", capture.join(", ")));
            let file_ix = to_u32(t.provenance.files.len());
            match crate::ingest::adapters::terminal::terminal_capture::read(&log.path, &log.display, file_ix) {
                Ok((cap, file)) => {
                    t.provenance.files.push(file);
                    if t.harness == "unknown"
                        && let Some(agent) = cap.agent
                    {
                        t.harness = agent.to_string();
                    }
                    crate::ingest::adapters::terminal::terminal_capture::apply(&mut t, cap);
                    mark_after_agent(&mut t, trial.agent_ended_at.as_deref());
                }
                Err(e) => t.notes.push(format!("the terminal capture could not be read: {e}")),
            }
        } else {
            t.notes.push(format!("the trajectory is only a terminal capture ({}): the record has no steps", capture.join(", ")));
        }
        out.emit(t);

        // The first trial of a run also speaks for the run-level entries with no trial directory.
        if let Some(run) = run_dir(&unit.primary.path, ctx.files) {
            let run_results = run.join("results.json");
            let trials: Vec<&PathBuf> = ctx
                .files
                .range(run.clone()..)
                .take_while(|(p, _)| p.starts_with(&run))
                .filter(|(_, a)| **a == Some(TRIAL))
                .map(|(p, _)| p)
                .collect();
            if has(ctx.files, &run_results, RUN) && trials.first().is_some_and(|p| **p == unit.primary.path) {
                let present: Vec<String> = trials.iter().filter_map(|p| dir_name(p)).collect();
                let shown = crate::util::display_path(&run_results);
                emit_run_entries(&run_results, &shown, &present, ctx, out, self.name())?;
            }
        }
        Ok(())
    }
}

/// Emits a record for every entry of a run-level `results.json` whose trial is not in
/// `present`. Entries that do not parse become diagnostics; the rest are kept.
#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
fn emit_run_entries(
    path: &Path,
    shown: &str,
    present: &[String],
    ctx: &Ctx<'_>,
    out: &mut Output<'_>,
    adapter: &str,
) -> Result<(), InputError> {
    let src = Source::read(path, shown)?;
    let text = src.text()?;
    let run: RawRun<'_> =
        serde_json::from_str(text).map_err(|e| InputError::from_json(shown, &src.bytes, "Terminal-Bench run results", &e))?;
    let meta =
        path.parent().map(|d| d.join("run_metadata.json")).filter(|p| has(ctx.files, p, RUN_METADATA)).and_then(|p| read_metadata(&p));
    for raw in &run.results {
        let trial: RawTrial = match serde_json::from_str(raw.get()) {
            Ok(t) => t,
            Err(e) => {
                let base = src.offset_of(raw.get()).unwrap_or(0);
                out.diagnostics.push(InputError::from_json_at(shown, &src.bytes, base, "Terminal-Bench trial result", &e));
                continue;
            }
        };
        if present.contains(&trial.trial_name) {
            continue;
        }
        let mut files = vec![src.provenance("run_results")];
        if let Some((_, f)) = &meta {
            files.push(f.clone());
        }
        let mut t = record(&trial, shown, files, meta.as_ref().map(|(m, _)| m), adapter);
        t.notes.push("read from the run-level results.json: the trial directory is absent, so the record has no steps".into());
        out.emit(t);
    }
    Ok(())
}

/// The run-level `results.json`. Its trials are read from their own directories; it yields
/// records only when the run has no trial directories at all.
pub struct TerminalBenchRun;

impl Adapter for TerminalBenchRun {
    fn name(&self) -> &'static str {
        RUN
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "Terminal-Bench 1 run results (aggregate; records only for trials without a directory)"
    }

    fn versions(&self) -> &'static str {
        "Terminal-Bench 1 (BenchmarkResults)"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let Some(j) = &p.json else { return Err("not JSON".into()) };
        if j.keys.get("results") != Some(&crate::ingest::probe::Scalar::Array) {
            return Err("no results list".into());
        }
        if j.has("n_resolved") && j.has("resolved_ids") {
            return marker("run results (results, n_resolved, resolved_ids)");
        }
        let text = p.text();
        // A long run-level file shows only the start of its first trial in the probe.
        if text.contains("\"trial_name\"")
            && (text.contains("\"task_id\"") || text.contains("\"is_resolved\"") || text.contains("\"failure_mode\""))
        {
            return marker("run results (a results list of trial results)");
        }
        Err("the results list holds no trial results".into())
    }

    fn parse(&self, unit: &Unit, ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        // Reached only when no trial claimed this file: no trial of the run has a directory.
        emit_run_entries(&unit.primary.path, &unit.primary.display, &[], ctx, out, TRIAL)
    }
}

/// `run_metadata.json`, read by the trials of its run.
pub struct TerminalBenchRunMetadata;

impl Adapter for TerminalBenchRunMetadata {
    fn name(&self) -> &'static str {
        RUN_METADATA
    }

    fn role(&self) -> FileRole {
        FileRole::Metadata
    }

    fn describe(&self) -> &'static str {
        "Terminal-Bench 1 run metadata (agent, model, dataset)"
    }

    fn versions(&self) -> &'static str {
        "Terminal-Bench 1 (RunMetadata)"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let Some(j) = &p.json else { return Err("not JSON".into()) };
        if j.has("run_id")
            && j.has("agent_name")
            && (j.has("dataset_name") || j.has("dataset_path") || j.has("n_attempts") || j.has("task_ids"))
        {
            return marker("run metadata (run_id, agent_name, dataset)");
        }
        Err("no run_id/agent_name".into())
    }
}

/// The terminal capture and keystroke log of a trial, claimed by the trial's result.
pub struct TerminalBenchCapture;

impl Adapter for TerminalBenchCapture {
    fn name(&self) -> &'static str {
        CAPTURE
    }

    fn role(&self) -> FileRole {
        FileRole::Metadata
    }

    fn describe(&self) -> &'static str {
        "Terminal-Bench 1 terminal capture or keystroke log (read with its trial)"
    }

    fn versions(&self) -> &'static str {
        "Terminal-Bench 1 (tmux agent.log)"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let parents: Vec<String> = p.parents().take(2).collect();
        let in_trial = |i: usize| parents.get(i).is_some_and(|n| looks_like_trial_dir(n));
        let ext = p.ext();
        if p.name == "commands.txt" && in_trial(0) {
            return file_name("commands.txt in a trial directory");
        }
        if parents.first().is_some_and(|n| n == "sessions") && matches!(ext, "log" | "cast") && in_trial(1) {
            return file_name("sessions/*.log|cast in a trial directory");
        }
        if parents.first().is_some_and(|n| n == "panes") && ext == "txt" && in_trial(1) {
            return file_name("panes/*.txt in a trial directory");
        }
        Err("not a capture in a <task>.N-of-M trial directory".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines stamped after the agent phase's end move to `AFTER_AGENT`; the agent's exit racing the
    /// clock (within two seconds), lines before it, unstamped lines and other fields stay.
    #[test]
    fn capture_lines_logged_after_the_agent_phase_are_marked() {
        let mut t = Trajectory::new(String::from("t"), "openhands", "terminal-bench", 1, Vec::new());
        let log = super::super::terminal_capture::LOG;
        for (field, text) in [
            (log, "22:01:49 - openhands:INFO: action"),
            (log, "22:02:04 - openhands:INFO: to AgentState.FINISHED"),
            (log, "22:02:09 - openhands:INFO: to AgentState.FINISHED"),
            (log, "exit"),
            (super::super::terminal_capture::STARTUP, "22:09:00 - openhands:INFO: started"),
        ] {
            t.signals.log_line(field, text);
        }
        mark_after_agent(&mut t, Some("2025-07-13T22:02:03.240000+00:00"));
        let fields: Vec<&str> = t.signals.log_lines.iter().map(|s| s.field.as_str()).collect();
        assert_eq!(fields, [log, log, crate::model::AFTER_AGENT, log, super::super::terminal_capture::STARTUP]);
        // Across midnight: 00:00:30 is after an end at 23:59:50.
        let mut t = Trajectory::new(String::from("t"), "openhands", "terminal-bench", 1, Vec::new());
        t.signals.log_line(log, "00:00:30 - openhands:INFO: to AgentState.FINISHED");
        mark_after_agent(&mut t, Some("2025-07-13T23:59:50+00:00"));
        assert_eq!(t.signals.log_lines[0].field, crate::model::AFTER_AGENT);
    }

    #[test]
    fn trial_names_give_the_attempt_and_the_run() {
        assert_eq!(parse_trial_name("oom.1-of-1.2025-08-07__20-46-16"), (Some(0), Some("2025-08-07__20-46-16")));
        assert_eq!(parse_trial_name("build-initramfs-qemu.4-of-5"), (Some(3), None));
        assert_eq!(parse_trial_name("hello"), (None, None));
    }
}
