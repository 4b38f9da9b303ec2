//! tau2-bench results (`sierra-research/tau2-bench`, the successor of tau-bench).
//!
//! A run is one `Results` document: `{timestamp, info, tasks, simulations}`. tau2 writes it in
//! one of two layouts (`data_model/simulation.py`, `Results.save`; `runner/batch.py` picks
//! `json` for text runs and `dir` for voice runs, and `tau2 convert-results` turns one into the
//! other, so either layout may hold either kind of run):
//!
//! - `json`: one file with every `SimulationRun` inline under `simulations`;
//! - `dir`: `results.json` with the same metadata but no simulations, beside a `simulations/`
//!   directory of one `<simulation id>.json` per run. tau2 itself reads the directory whenever
//!   it exists (`Results._detect_format`), and so does this adapter.
//!
//! Each simulation is one attempt of one task (`task_id`, `trial`) and becomes one record. The
//! run's `info` names the agent's model, the user simulator's, the domain and the limits; the
//! simulation says how it ended (`termination_reason`) and what the evaluator gave it
//! (`reward_info`). What an end reason means is `rules/harnesses/tau2-bench.toml`'s to say.

mod outcome;
mod sim;

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::ingest::adapters::shared::common::task_string;
use crate::ingest::adapters::shared::json_walk::document;
use crate::ingest::diag::InputError;
use crate::ingest::format::{Adapter, Ctx, FileEntry, FileRole, FileSet, Output, Sniff, Unit, marker};
use crate::ingest::probe::Probe;
use crate::ingest::source::Source;
use crate::model::DeclaredTool;

const NAME: &str = "tau2-bench";
/// The directory of a `dir`-layout run's simulation files (`SIMULATIONS_DIR`).
const SIMULATIONS_DIR: &str = "simulations";
/// The metadata file of a `dir`-layout run.
const RESULTS_FILE: &str = "results.json";

/// tau2-bench results files, `dir`-layout run directories and single simulation files.
pub struct Tau2Bench;

/// A `Results` document, or (`termination_reason`, or neither `info` nor `tasks`) one
/// `SimulationRun` named on its own: one reading tells them apart.
#[derive(Deserialize)]
struct RawResults<'a> {
    #[serde(default)]
    termination_reason: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    info: Option<Value>,
    #[serde(default)]
    tasks: Option<Vec<Value>>,
    #[serde(borrow, default)]
    simulations: Option<Vec<&'a RawValue>>,
    #[serde(default)]
    simulation_index: Option<Vec<Value>>,
}

/// What the run's `info` and `tasks` say about every simulation in it.
#[derive(Debug, Default, Clone)]
pub(crate) struct Run {
    pub model: Option<String>,
    pub user_model: Option<String>,
    pub agent_impl: Option<String>,
    pub user_impl: Option<String>,
    pub domain: Option<String>,
    pub max_steps: Option<f64>,
    pub max_errors: Option<f64>,
    pub git_commit: Option<String>,
    pub declared: Option<Vec<DeclaredTool>>,
    /// Expected actions per task id (`evaluation_criteria.actions`): name and requestor.
    pub expected: std::collections::HashMap<String, Vec<(String, String)>>,
}

impl Run {
    fn from_results(r: &RawResults<'_>) -> Self {
        let info = r.info.as_ref().unwrap_or(&Value::Null);
        let s = |p: &str| info.pointer(p).and_then(Value::as_str).filter(|s| !s.is_empty()).map(String::from);
        let declared = info.pointer("/environment_info/tool_defs").and_then(Value::as_object).map(|defs| {
            defs.iter()
                .map(|(name, sig)| DeclaredTool {
                    name: name.clone(),
                    description: sig.get("doc").and_then(Value::as_str).map(|d| d.lines().next().unwrap_or("").to_string()),
                })
                .collect()
        });
        let mut expected = std::collections::HashMap::new();
        for task in r.tasks.iter().flatten() {
            let Some(id) = task.get("id").map(task_string) else { continue };
            let actions = task.pointer("/evaluation_criteria/actions").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
            let list: Vec<(String, String)> = actions
                .iter()
                .filter_map(|a| {
                    let name = a.get("name")?.as_str()?.to_string();
                    let who = a.get("requestor").and_then(Value::as_str).unwrap_or("assistant").to_string();
                    Some((name, who))
                })
                .collect();
            expected.insert(id, list);
        }
        Self {
            model: s("/agent_info/llm"),
            user_model: s("/user_info/llm"),
            agent_impl: s("/agent_info/implementation"),
            user_impl: s("/user_info/implementation"),
            domain: s("/environment_info/domain_name"),
            max_steps: info.get("max_steps").and_then(Value::as_f64),
            max_errors: info.get("max_errors").and_then(Value::as_f64),
            git_commit: s("/git_commit"),
            declared,
            expected,
        }
    }
}

fn is_results(p: &Probe) -> bool {
    p.json
        .as_ref()
        .is_some_and(|j| !j.top_is_array && j.has("info.agent_info") && j.has("info.user_info") && j.has("info.environment_info"))
}

/// A `SimulationRun` on its own (a `dir`-layout simulation file).
fn is_simulation(p: &Probe) -> bool {
    p.json
        .as_ref()
        .is_some_and(|j| !j.top_is_array && j.has("task_id") && j.has("termination_reason") && j.has("start_time") && j.has("end_time"))
}

impl Adapter for Tau2Bench {
    fn name(&self) -> &'static str {
        NAME
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "tau2-bench results (info.agent_info/user_info/environment_info, simulations) or a simulations/<id>.json run"
    }

    fn versions(&self) -> &'static str {
        "Results json/dir, half and full duplex"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        if p.json.is_none() {
            return Err("not JSON".into());
        }
        if is_results(p) {
            return marker("tau2-bench results (info.agent_info, info.user_info, info.environment_info)");
        }
        if is_simulation(p) {
            return marker("tau2-bench simulation (task_id, termination_reason, start_time, end_time)");
        }
        Err("no info.agent_info/user_info/environment_info, nor task_id with termination_reason".into())
    }

    /// A `dir`-layout run's simulation files belong to its `results.json`.
    fn companions(&self, primary: &Path, files: &FileSet) -> Vec<PathBuf> {
        let Some(dir) = primary.parent().map(|d| d.join(SIMULATIONS_DIR)) else { return Vec::new() };
        files
            .range(dir.clone()..)
            .take_while(|(p, _)| p.starts_with(&dir))
            .filter(|(p, a)| p.parent() == Some(dir.as_path()) && p.extension().is_some_and(|e| e == "json") && **a == Some(NAME))
            .map(|(p, _)| p.clone())
            .collect()
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        let src = Source::read(&unit.primary.path, &unit.primary.display)?;
        let r: RawResults<'_> = document(&src, "tau2-bench results")?;
        // A simulation file given without its run: the run's metadata, if it sits beside it.
        if r.termination_reason.is_some() || (r.info.is_none() && r.tasks.is_none()) {
            return parse_lone_simulation(unit, &src, out);
        }
        let run = Run::from_results(&r);
        let sim_files = simulation_files(unit);
        if sim_files.is_empty() {
            for raw in r.simulations.iter().flatten() {
                match sim::record(&src, raw, &run, vec![src.provenance("transcript")], "json") {
                    Ok(t) => out.emit(t),
                    Err(e) => out.diagnostics.push(e),
                }
            }
            return Ok(());
        }
        // tau2 reads the directory when it exists (`Results._detect_format`); so does coroner.
        let inline = r.simulations.as_ref().map_or(0, Vec::len);
        let shadowed =
            (inline > 0).then(|| format!("{} simulations listed inline in {} were passed over for simulations/", inline, src.display));
        if let Some(index) = &r.simulation_index
            && index.len() != sim_files.len()
        {
            out.diagnostics.push(InputError::new(
                crate::ingest::diag::InputErrorKind::Schema,
                &src.display,
                format!("match simulation_index ({} entries) with the {} files in simulations/", index.len(), sim_files.len()),
            ));
        }
        for f in &sim_files {
            match read_simulation_file(f, &src, &run) {
                Ok(mut t) => {
                    t.notes.extend(shadowed.clone());
                    out.emit(t);
                }
                Err(e) => out.diagnostics.push(e),
            }
        }
        Ok(())
    }
}

/// The simulation files of a `dir`-layout run: those detection gave it, or, for a
/// `results.json` named on its own, those on disk beside it, in name order either way.
fn simulation_files(unit: &Unit) -> Vec<FileEntry> {
    if !unit.companions.is_empty() {
        let mut c = unit.companions.clone();
        c.sort_by(|a, b| a.path.cmp(&b.path));
        return c;
    }
    let Some(dir) = unit.primary.path.parent().map(|d| d.join(SIMULATIONS_DIR)) else { return Vec::new() };
    let Ok(rd) = std::fs::read_dir(&dir) else { return Vec::new() };
    let mut paths: Vec<PathBuf> =
        rd.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "json")).collect();
    paths.sort();
    let beside = |s: &str, name: &str| match s.rsplit_once('/') {
        Some((d, _)) => format!("{d}/{SIMULATIONS_DIR}/{name}"),
        None => format!("{SIMULATIONS_DIR}/{name}"),
    };
    paths
        .into_iter()
        .map(|path| {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            FileEntry { display: beside(&unit.primary.display, &name), rel: beside(&unit.primary.rel, &name), path }
        })
        .collect()
}

#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
fn read_simulation_file(f: &FileEntry, results: &Source, run: &Run) -> Result<crate::model::Trajectory, InputError> {
    let src = Source::read(&f.path, &f.display)?;
    let raw: &RawValue = document(&src, "tau2-bench simulation")?;
    sim::record(&src, raw, run, vec![src.provenance("transcript"), results.provenance("run_metadata")], "dir")
}

/// One simulation file parsed as the primary file: its run's `results.json`, one directory up,
/// still names the models and limits when it is there.
fn parse_lone_simulation(unit: &Unit, src: &Source, out: &mut Output<'_>) -> Result<(), InputError> {
    let raw: &RawValue = document(src, "tau2-bench simulation")?;
    let results_path = unit
        .primary
        .path
        .parent()
        .filter(|d| d.file_name().is_some_and(|n| n == SIMULATIONS_DIR))
        .and_then(Path::parent)
        .map(|d| d.join(RESULTS_FILE));
    // Shown as the input was given: `<run>/simulations/<id>.json` → `<run>/results.json`.
    let shown = unit.primary.display.rsplitn(3, '/').nth(2).map_or_else(|| format!("../{RESULTS_FILE}"), |d| format!("{d}/{RESULTS_FILE}"));
    let meta = results_path.filter(|p| p.is_file()).and_then(|p| Source::read(&p, &shown).ok());
    let parsed = meta
        .as_ref()
        .and_then(|m| m.text().ok().and_then(|t| serde_json::from_str::<RawResults<'_>>(t).ok()).map(|r| (m, Run::from_results(&r))));
    let (run, files) = match &parsed {
        Some((m, run)) => (run.clone(), vec![src.provenance("transcript"), m.provenance("run_metadata")]),
        None => (Run::default(), vec![src.provenance("transcript")]),
    };
    match sim::record(src, raw, &run, files, "dir") {
        Ok(t) => out.emit(t),
        Err(e) => out.diagnostics.push(e),
    }
    Ok(())
}
