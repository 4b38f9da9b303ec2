//! Harbor job and trial directories.
//!
//! A trial directory (`<task>__<id>/`) holds `result.json` (the TrialResult: rewards, the
//! exception that ended the trial, token counts, timings) and `agent/trajectory.json` (ATIF),
//! beside native agent logs. The trial result is the primary file: it claims everything in its
//! directory, so a native log next to the ATIF file is never counted as a second attempt.
//! The job's own `result.json` and `config.json` are metadata.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::ingest::adapters::shared::build::to_u32;
use crate::ingest::adapters::terminal::atif;
use crate::ingest::diag::InputError;
use crate::ingest::format::{Adapter, Ctx, FileRole, FileSet, Output, Sniff, Unit, marker, structure};
use crate::ingest::probe::Probe;
use crate::ingest::source::Source;
use crate::model::{Outcome, OutcomeStatus, TestResult, Trajectory};
use crate::util::seconds_between;

#[derive(Deserialize)]
struct RawTrial {
    task_name: String,
    trial_name: String,
    #[serde(default)]
    config: Value,
    #[serde(default)]
    agent_info: Option<RawAgentInfo>,
    #[serde(default)]
    agent_result: Option<RawAgentResult>,
    #[serde(default)]
    verifier_result: Option<RawVerifier>,
    #[serde(default)]
    exception_info: Option<RawException>,
    #[serde(default)]
    started_at: Option<String>,
    #[serde(default)]
    finished_at: Option<String>,
    #[serde(default)]
    agent_execution: Option<RawTiming>,
}

#[derive(Deserialize)]
struct RawAgentInfo {
    name: String,
    #[serde(default)]
    version: Option<String>,
    #[serde(default)]
    model_info: Option<RawModelInfo>,
}

#[derive(Deserialize)]
struct RawModelInfo {
    name: String,
    #[serde(default)]
    provider: Option<String>,
}

#[derive(Deserialize)]
struct RawAgentResult {
    n_input_tokens: Option<u64>,
    n_cache_tokens: Option<u64>,
    n_output_tokens: Option<u64>,
    cost_usd: Option<f64>,
}

#[derive(Deserialize)]
struct RawVerifier {
    #[serde(default)]
    rewards: Option<serde_json::Map<String, Value>>,
}

#[derive(Deserialize)]
struct RawException {
    exception_type: String,
    #[serde(default)]
    exception_message: String,
}

#[derive(Deserialize)]
struct RawTiming {
    started_at: Option<String>,
    finished_at: Option<String>,
}

/// A Harbor trial directory, read through its `result.json`.
pub struct HarborTrial;

impl Adapter for HarborTrial {
    fn name(&self) -> &'static str {
        "harbor"
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "Harbor trial directory (result.json + agent/trajectory.json)"
    }

    fn versions(&self) -> &'static str {
        "TrialResult + ATIF 1.0–1.8"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let Some(j) = &p.json else { return Err("not JSON".into()) };
        if j.has("trial_name") && j.has("task_name") && (j.has("agent_info") || j.has("verifier_result") || j.has("trial_uri")) {
            return marker("trial result (task_name, trial_name, agent_info)");
        }
        if j.has("trial_name") && j.has("task_name") && j.truncated {
            return structure("trial result keys (task_name, trial_name)");
        }
        Err("no task_name/trial_name".into())
    }

    fn companions(&self, primary: &Path, files: &FileSet) -> Vec<PathBuf> {
        let Some(dir) = primary.parent() else { return Vec::new() };
        files.range(dir.to_path_buf()..).take_while(|(p, _)| p.starts_with(dir)).map(|(p, _)| p.clone()).filter(|p| p != primary).collect()
    }

    fn parse(&self, unit: &Unit, ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        let src = Source::read(&unit.primary.path, &unit.primary.display)?;
        let trial: RawTrial = src.json("Harbor trial result")?;
        let files = vec![src.provenance("trial_result")];
        let dir = unit.primary.path.parent().unwrap_or(Path::new(""));
        let atif_path = dir.join("agent").join("trajectory.json");
        // A trial's result.json given on its own (not its directory) still reads the trajectory
        // beside it: the walk never saw that file, so look on disk.
        let on_disk = (!unit.companions.iter().any(|c| c.path == atif_path) && atif_path.is_file()).then(|| {
            let sibling = |s: &str| {
                s.rsplit_once('/').map_or_else(|| "agent/trajectory.json".to_string(), |(d, _)| format!("{d}/agent/trajectory.json"))
            };
            crate::ingest::format::FileEntry {
                path: atif_path.clone(),
                display: sibling(&unit.primary.display),
                rel: sibling(&unit.primary.rel),
            }
        });
        let atif_entry = unit.companions.iter().find(|c| c.path == atif_path).or(on_disk.as_ref());
        let mut t = match atif_entry {
            Some(e) => atif::parse_file(&e.path, &e.display, files, self.name())?,
            None => {
                let mut t = Trajectory::new("", "", self.name(), self.version(), files);
                t.notes.push(NO_ATIF.into());
                t.provenance.format_version = Some("harbor trial result (no trajectory)".into());
                t
            }
        };
        let atif_harness = t.harness.clone();
        t.task_id = trial.task_name.clone();
        if let Some(info) = &trial.agent_info {
            t.harness = info.name.clone();
            if t.harness_version.is_none() {
                t.harness_version = info.version.clone().filter(|v| !v.is_empty() && v != "unknown");
            }
        } else if !atif_harness.is_empty() {
            t.harness = atif_harness;
        }
        let configured = trial.config.pointer("/agent/model_name").and_then(Value::as_str).map(ToString::to_string);
        let from_info = trial.agent_info.as_ref().and_then(|i| i.model_info.as_ref()).map(|m| match &m.provider {
            Some(p) if !p.is_empty() => format!("{p}/{}", m.name),
            _ => m.name.clone(),
        });
        t.model = configured.or(from_info).or(t.model.take());
        t.trial = trial_index(&unit.primary.path, &trial.trial_name, ctx);
        t.started_at = trial.started_at.clone();
        t.ended_at = trial.finished_at.clone();
        if let Some(ar) = &trial.agent_result {
            t.usage.prompt_tokens = ar.n_input_tokens.or(t.usage.prompt_tokens);
            t.usage.cached_tokens = ar.n_cache_tokens.or(t.usage.cached_tokens);
            t.usage.completion_tokens = ar.n_output_tokens.or(t.usage.completion_tokens);
            t.usage.cost_usd = ar.cost_usd.or(t.usage.cost_usd);
        }
        let agent_secs = trial
            .agent_execution
            .as_ref()
            .and_then(|a| Some((a.started_at.as_deref()?, a.finished_at.as_deref()?)))
            .and_then(|(a, b)| seconds_between(a, b));
        t.usage.wall_seconds = agent_secs;
        t.signals.consumed.wall_seconds = agent_secs;

        t.outcome = outcome(&trial, &unit.primary.display);
        if let Some(ex) = &trial.exception_info {
            // What the exception means (a clock, a context window, a broken environment) is
            // Harbor's vocabulary, in rules/harnesses/harbor.toml.
            t.signals.status("exception_info.exception_type", ex.exception_type.trim());
            if !ex.exception_message.trim().is_empty() {
                t.signals.error("exception_info.exception_message", ex.exception_message.trim());
            }
            if t.outcome.status == OutcomeStatus::Unknown {
                t.outcome = Outcome::new(OutcomeStatus::Errored, unit.primary.display.clone(), "exception_info");
                t.outcome.detail = Some(format!("no reward: the trial ended with {}", ex.exception_type));
            }
        }
        native_log(&mut t, unit, dir, ctx);
        verifier_output(&mut t, unit, dir);
        out.emit(t);
        Ok(())
    }
}

/// The largest verifier report read: pytest's own output is kilobytes; more is a test that
/// printed without end.
const VERIFIER_REPORT_MAX: u64 = 64 << 20;

/// A reader of one kind of verifier report: its tests, or `None` when the bytes hold none.
type ReadReport = fn(&[u8]) -> Option<Vec<TestResult>>;

/// The verifier's own report: its CTRF file (`verifier/ctrf.json`, what `pytest --ctrf` writes
/// in Harbor's task template), else its pytest console output (`verifier/test-stdout.txt`).
/// Harbor's rewards hold one number; the report holds which tests failed and what each saw,
/// which is how a reader tells a task whose inputs were broken from wrong work. Read only where
/// the rewards name no tests; a report that does not read is noted and left, and the verdict
/// stands on the rewards.
fn verifier_output(t: &mut Trajectory, unit: &Unit, dir: &Path) {
    if !t.outcome.tests.is_empty() || t.outcome.status == OutcomeStatus::Unknown {
        return;
    }
    let readers: [(&str, ReadReport); 2] = [
        ("ctrf.json", crate::ingest::outcomes::ctrf::report),
        ("test-stdout.txt", |b| Some(crate::ingest::outcomes::pytest::report(&String::from_utf8_lossy(b))).filter(|r| !r.is_empty())),
    ];
    for (name, read) in readers {
        let path = dir.join("verifier").join(name);
        let Some(c) = unit.companions.iter().find(|c| c.path == path) else { continue };
        // A verifier that printed without end (a test stuck in a loop of output) must not cost
        // the machine's memory for a message or two.
        if std::fs::metadata(&c.path).is_ok_and(|m| m.len() > VERIFIER_REPORT_MAX) {
            t.notes.push(format!("verifier report {} is over {} MB; not read", c.rel, VERIFIER_REPORT_MAX >> 20));
            continue;
        }
        let src = match Source::read(&c.path, &c.display) {
            Ok(s) => s,
            Err(e) => {
                t.notes.push(format!("verifier report {} not read: failed to {}", c.rel, e.message));
                continue;
            }
        };
        let Some(tests) = read(&src.bytes) else {
            // A console log without pytest's lines is common (the tests never ran); a CTRF
            // file that does not read is not.
            if name == "ctrf.json" {
                t.notes.push(format!("verifier report {} is not a CTRF report; left", c.rel));
            }
            continue;
        };
        t.provenance.files.push(src.provenance("verifier_output"));
        t.notes.push(format!("per-test results read from the verifier's report {}", c.rel));
        t.outcome.tests = tests;
        return;
    }
}

const NO_ATIF: &str = "the trial has no agent/trajectory.json: the record has no steps";

/// A native agent log beside the ATIF file (mini-swe-agent's own trajectory, say) knows how
/// the agent ended when the ATIF conversion does not: its signals follow the trial's own (the
/// exception Harbor recorded speaks first), and its steps stand in when there is no ATIF file.
fn native_log(t: &mut Trajectory, unit: &Unit, dir: &Path, ctx: &Ctx<'_>) {
    let agent_dir = dir.join("agent");
    for c in unit.companions.iter().filter(|c| c.path.parent() == Some(agent_dir.as_path())) {
        let Some(Some(name)) = ctx.files.get(&c.path) else { continue };
        let Some(adapter) =
            crate::ingest::adapters::by_name(name).filter(|a| a.role() == FileRole::Transcript && !matches!(*name, "atif" | "harbor"))
        else {
            continue;
        };
        let mut native = Vec::new();
        let mut sink = |x: Trajectory| native.push(x);
        let mut nout = Output::new(&mut sink);
        let sub = Unit { primary: c.clone(), companions: Vec::new() };
        if adapter.parse(&sub, ctx, &mut nout).is_err() {
            t.notes.push(format!("native agent log {} did not parse; ignored", c.rel));
            continue;
        }
        drop(nout);
        let Some(mut n) = native.into_iter().next() else { continue };
        // The native record's spans point into its own file list, which is appended to ours.
        let base = to_u32(t.provenance.files.len());
        let rebase = |span: &mut Option<crate::model::SourceSpan>| {
            if let Some(s) = span.as_mut() {
                s.file += base;
            }
        };
        let mut used = Vec::new();
        let sig = &mut n.signals;
        if !(sig.statuses.is_empty() && sig.errors.is_empty() && sig.log_lines.is_empty()) {
            for s in sig.statuses.iter_mut().chain(sig.errors.iter_mut()).chain(sig.log_lines.iter_mut()) {
                rebase(&mut s.span);
            }
            t.signals.statuses.append(&mut sig.statuses);
            t.signals.errors.append(&mut sig.errors);
            t.signals.log_lines.append(&mut sig.log_lines);
            used.push("signals");
        }
        if !sig.limits.is_empty() || !sig.consumed.is_empty() {
            t.signals.limits.fill_from(&sig.limits);
            t.signals.consumed.fill_from(&sig.consumed);
            used.push("limits");
        }
        if t.steps.is_empty() && !n.steps.is_empty() {
            t.steps = n.steps;
            for s in &mut t.steps {
                rebase(&mut s.source_span);
            }
            used.push("steps");
            // The steps are the native log's after all.
            t.notes.retain(|n| n != NO_ATIF);
        }
        // Harbor's verifier reads the workspace, not what the agent's own log says it
        // submitted (mini-swe-agent's `info.submission` is empty under Harbor): the trial has
        // no submission to grade.
        if used.is_empty() {
            t.notes.push(format!("native agent log kept beside ATIF, not needed: {}", c.rel));
        } else {
            t.provenance.files.extend(n.provenance.files);
            t.notes.push(format!("{} taken from the native {name} log {}", used.join(", "), c.rel));
        }
    }
}

fn outcome(trial: &RawTrial, display: &str) -> Outcome {
    let Some(rewards) = trial.verifier_result.as_ref().and_then(|v| v.rewards.as_ref()) else { return Outcome::unknown() };
    let reward = rewards.get("reward").and_then(Value::as_f64).or_else(|| {
        let vals: Vec<f64> = rewards.values().filter_map(Value::as_f64).collect();
        #[expect(clippy::cast_precision_loss, reason = "a handful of rewards")]
        (!vals.is_empty()).then(|| vals.iter().sum::<f64>() / vals.len() as f64)
    });
    let Some(r) = reward else { return Outcome::unknown() };
    let field = if rewards.contains_key("reward") { "verifier_result.rewards.reward" } else { "verifier_result.rewards (mean)" };
    let mut o = Outcome::from_reward(r, display, field);
    o.tests = rewards.iter().filter(|(k, _)| k.as_str() != "reward").map(|(k, v)| TestResult::new(k.clone(), v.to_string())).collect();
    o
}

/// The trial's rank among the trials of the same task in the same job directory, by name.
/// Harbor names trials `<task, maybe shortened>__<random id>`, so siblings share the part
/// before the last `__`.
fn trial_index(primary: &Path, trial_name: &str, ctx: &Ctx<'_>) -> u32 {
    let Some(job) = primary.parent().and_then(Path::parent) else { return 0 };
    let stem = |n: &str| n.rsplit_once("__").map_or(n.to_string(), |(a, _)| a.to_string());
    let mine = stem(trial_name);
    let mut names: Vec<String> = ctx
        .cousins("harbor", job)
        .iter()
        .filter_map(|p| p.parent()?.file_name().map(|n| n.to_string_lossy().into_owned()))
        .filter(|n| stem(n) == mine)
        .collect();
    names.sort();
    names.iter().position(|n| n == trial_name).and_then(|i| u32::try_from(i).ok()).unwrap_or(0)
}

/// A Harbor job's own `result.json` (aggregate stats) and job/trial `config.json`.
pub struct HarborJob;

impl Adapter for HarborJob {
    fn name(&self) -> &'static str {
        "harbor-job"
    }

    fn role(&self) -> FileRole {
        FileRole::Metadata
    }

    fn describe(&self) -> &'static str {
        "Harbor job summary or configuration; trials are read from their own directories"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let Some(j) = &p.json else { return Err("not JSON".into()) };
        if j.has("n_total_trials") && j.has("stats") {
            return marker("job result (n_total_trials, stats)");
        }
        if p.name == "config.json" && (j.has("job_name") || j.has("jobs_dir") || (j.has("trial_name") && j.has("trials_dir"))) {
            return marker("job or trial config (job_name / trials_dir)");
        }
        Err("no n_total_trials/stats or job config keys".into())
    }
}
