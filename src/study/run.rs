//! Runs a study: ingests and classifies each arm's transcripts with that arm's registry,
//! verdicts and limits, so every later table starts from one list of verdicts per arm.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::{BudgetSpec, ResolvedArm};
use crate::classify::{Classifier, LoadedRegistry, Options};
use crate::ingest::{IngestOptions, InputError};
use crate::model::Verdict;
use crate::rules::Rules;

/// The verdicts of one arm.
#[derive(Debug, Clone)]
pub struct ArmRun {
    pub name: String,
    pub verdicts: Vec<Verdict>,
    pub budget: BudgetSpec,
    pub files_seen: usize,
    pub quarantined: usize,
    /// The earliest timestamp among the arm's trajectories (for late-seal checks).
    pub earliest: Option<String>,
}

/// Something more to make of each trajectory while it is in memory, for a consumer that needs
/// its steps and not only its verdict (the HTML report's pages). The study keeps verdicts
/// only, so memory stays bounded by the largest trajectory: `map` runs inside the parallel
/// parse and returns parts (text), `sink` receives them in input order with the arm's name and
/// the verdict's position in that arm's list, so a consumer can name its files after the
/// verdict they belong to.
pub struct Also<'a> {
    pub map: &'a AlsoMap<'a>,
    pub sink: &'a mut AlsoSink<'a>,
}

/// [`Also::map`]: the arm's name, the trajectory and its verdict, to parts.
pub type AlsoMap<'a> = dyn Fn(&str, &crate::model::Trajectory, &Verdict) -> Vec<String> + Sync + 'a;
/// [`Also::sink`]: the arm's name, the verdict's position in the arm, the parts.
pub type AlsoSink<'a> = dyn FnMut(&str, usize, Vec<String>) -> std::io::Result<()> + 'a;

/// A study after classification.
#[derive(Debug, Clone)]
pub struct StudyRun {
    pub title: Option<String>,
    pub arms: Vec<ArmRun>,
    pub rules_digest: String,
    /// sha256 of every registry in force, by file.
    pub registries: BTreeMap<String, String>,
}

impl StudyRun {
    #[must_use]
    pub fn arm(&self, name: &str) -> Option<&ArmRun> {
        self.arms.iter().find(|a| a.name == name)
    }

    #[must_use]
    pub fn quarantined(&self) -> usize {
        self.arms.iter().map(|a| a.quarantined).sum()
    }
}

/// Problems that stop a study run (bad inputs are counted, not errors).
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum RunError {
    #[error(transparent)]
    #[diagnostic(transparent)]
    Ingest(#[from] crate::ingest::IngestError),
    #[error(transparent)]
    #[diagnostic(transparent)]
    Registry(#[from] InputError),
    #[error("failed to extract a registry from {0}: {1}")]
    #[diagnostic(code(coroner::study::registry))]
    Extract(String, String),
}

/// When a trajectory began: its start time, else its first step's time.
fn first_time(t: &crate::model::Trajectory) -> Option<String> {
    t.started_at.clone().or_else(|| t.steps.iter().find_map(|s| s.timestamp.clone()))
}

/// Keeps the earlier of `earliest` and `candidate`, compared as times (not as text).
fn keep_earliest(earliest: &mut Option<String>, candidate: Option<String>) {
    use crate::util::parse_time;
    // A time that does not parse cannot be compared; it never becomes the earliest.
    if let Some(f) = candidate
        && parse_time(&f).is_some()
        && earliest.as_ref().is_none_or(|e| parse_time(&f) < parse_time(e))
    {
        *earliest = Some(f);
    }
}

/// Loads a registry file, or extracts one from a source directory.
///
/// # Errors
/// An unreadable registry or a source tree without files.
pub fn load_registry(path: &std::path::Path) -> Result<LoadedRegistry, RunError> {
    let shown = crate::util::display_path(path);
    if path.is_dir() {
        let queries =
            crate::registry::QuerySet::builtin(&crate::registry::Lang::ALL).map_err(|e| RunError::Extract(shown.clone(), e.to_string()))?;
        let opts = crate::registry::ExtractOptions { sources: vec![path.to_path_buf()], ..crate::registry::ExtractOptions::default() };
        let ex = crate::registry::extract(&opts, &queries).map_err(|e| RunError::Extract(shown.clone(), e.to_string()))?;
        return Ok(LoadedRegistry { file: shown, registry: ex.registry });
    }
    Ok(LoadedRegistry { file: shown, registry: crate::registry::load(path)? })
}

/// Classifies each arm with its own settings. `diagnostics` receives every input problem;
/// `also`, when given, sees every trajectory with its verdict.
///
/// # Errors
/// A registry that cannot be read, an arm without readable input, or a failure of `also`'s
/// sink.
pub fn run_study(
    title: Option<String>,
    arms: &[ResolvedArm],
    rules: &Rules,
    extra: &[PathBuf],
    format: Option<&str>,
    diagnostics: &mut Vec<InputError>,
    mut also: Option<&mut Also<'_>>,
) -> Result<StudyRun, RunError> {
    let mut out = Vec::new();
    let mut registries = BTreeMap::new();
    let mut common = Vec::new();
    for r in extra {
        let reg = load_registry(r)?;
        registries.insert(reg.file.clone(), reg.registry.content_digest());
        common.push(reg);
    }
    for arm in arms {
        let mut loaded = Vec::new();
        if let Some(r) = &arm.registry {
            let reg = load_registry(r)?;
            registries.insert(reg.file.clone(), reg.registry.content_digest());
            loaded.push(reg);
        }
        loaded.extend(common.iter().cloned());
        let c = Classifier::new(
            rules.clone(),
            loaded,
            Options {
                step_limit: arm.spec.budget.step_limit,
                time_limit_seconds: arm.spec.budget.time_limit_seconds,
                cost_limit_usd: arm.spec.budget.cost_limit_usd,
                token_limit: arm.spec.budget.token_limit,
            },
        );
        let opts = IngestOptions {
            inputs: arm.inputs.clone(),
            verdicts: arm.verdicts.iter().cloned().collect(),
            harness: arm.spec.harness.clone(),
            format: format.map(ToString::to_string),
            ..IngestOptions::default()
        };
        let mut verdicts = Vec::new();
        let mut earliest: Option<String> = None;
        let name = arm.spec.name.as_str();
        let map = also.as_ref().map(|a| a.map);
        let summary = crate::pipeline::run_map(
            &opts,
            &c.rules,
            &|t| {
                let first = first_time(&t);
                let v = c.classify(&t);
                let parts = map.map(|m| m(name, &t, &v)).unwrap_or_default();
                (v, first, parts)
            },
            &mut |(mut v, first, parts): (Verdict, Option<String>, Vec<String>)| {
                v.arm = Some(arm.spec.name.clone());
                keep_earliest(&mut earliest, first);
                if let Some(a) = also.as_mut() {
                    (a.sink)(name, verdicts.len(), parts)?;
                }
                verdicts.push(v);
                Ok(())
            },
        )?;
        diagnostics.extend(summary.diagnostics);
        out.push(ArmRun {
            name: arm.spec.name.clone(),
            verdicts,
            budget: arm.spec.budget.clone(),
            files_seen: summary.files.len(),
            quarantined: summary.quarantined_records
                + summary.files.iter().filter(|f| matches!(f.status, crate::ingest::FileStatus::Quarantined { .. })).count(),
            earliest,
        });
    }
    Ok(StudyRun { title, arms: out, rules_digest: rules.digest.clone(), registries })
}

/// Arms for inputs without a study file: `--arm NAME=PATH` pairs, or else one arm per
/// `harness/model` found in the transcripts.
///
/// # Errors
/// As [`run_study`].
pub fn run_inputs(
    inputs: &[PathBuf],
    named: &[(String, PathBuf)],
    rules: &Rules,
    registries: &[PathBuf],
    format: Option<&str>,
    diagnostics: &mut Vec<InputError>,
    mut also: Option<&mut Also<'_>>,
) -> Result<StudyRun, RunError> {
    if !named.is_empty() {
        let arms: Vec<ResolvedArm> = named
            .iter()
            .map(|(n, p)| ResolvedArm {
                spec: super::ArmSpec {
                    name: n.clone(),
                    inputs: vec![p.display().to_string()],
                    harness: None,
                    registry: None,
                    verdicts: None,
                    budget: BudgetSpec::default(),
                },
                inputs: vec![p.clone()],
                registry: None,
                verdicts: None,
            })
            .collect();
        return run_study(None, &arms, rules, registries, format, diagnostics, also);
    }
    let mut loaded = Vec::new();
    let mut regs = BTreeMap::new();
    for r in registries {
        let l = load_registry(r)?;
        regs.insert(l.file.clone(), l.registry.sha256.clone());
        loaded.push(l);
    }
    let c = Classifier::new(rules.clone(), loaded, Options::default());
    let opts = IngestOptions { inputs: inputs.to_vec(), format: format.map(ToString::to_string), ..IngestOptions::default() };
    let mut by_arm: BTreeMap<String, (Vec<Verdict>, Option<String>)> = BTreeMap::new();
    let map = also.as_ref().map(|a| a.map);
    let summary = crate::pipeline::run_map(
        &opts,
        &c.rules,
        &|t| {
            let v = c.classify(&t);
            let parts = map.map(|m| m(&v.arm_or_harness(), &t, &v)).unwrap_or_default();
            (v, first_time(&t), parts)
        },
        &mut |(v, first, parts): (Verdict, Option<String>, Vec<String>)| {
            let name = v.arm_or_harness();
            if let Some(a) = also.as_mut() {
                (a.sink)(&name, by_arm.get(&name).map_or(0, |e| e.0.len()), parts)?;
            }
            let arm = by_arm.entry(name).or_default();
            keep_earliest(&mut arm.1, first);
            arm.0.push(v);
            Ok(())
        },
    )?;
    let quarantined = summary.quarantined_records + summary.quarantined_files();
    diagnostics.extend(summary.diagnostics);
    let n = by_arm.len().max(1);
    let arms = by_arm
        .into_iter()
        .map(|(name, (verdicts, earliest))| ArmRun {
            name,
            verdicts,
            budget: BudgetSpec::default(),
            files_seen: summary.files.len() / n,
            quarantined: quarantined / n,
            earliest,
        })
        .collect();
    Ok(StudyRun { title: None, arms, rules_digest: rules.digest.clone(), registries: regs })
}
