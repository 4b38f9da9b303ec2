//! Checks a set of human labels against the structure of the trajectories they describe,
//! before anyone computes agreement with them: a failure class on a trajectory that passed, a
//! budget class on a run that ended with budget left, a step past the end, a label outside
//! the taxonomy, an id that names no trajectory. Each problem is reported with its row.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use super::SpotcheckError;
use super::labels::{LabelKind, Vocabulary};
use super::sample::uncell;
use super::select::{IdIndex, Lookup};
use crate::model::{OutcomeStatus, Termination, TerminationKind, Trajectory, Verdict};
use crate::report::sanitize;

/// The class a budget label names.
const BUDGET_CLASS: &str = "budget_exhausted";

/// One row of a labels file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelRow {
    /// Line of the row in the file (the header is line 1).
    pub row: u64,
    pub trajectory_id: Option<String>,
    pub task_id: Option<String>,
    pub label: String,
    pub steps: Option<String>,
}

/// Reads a labels CSV: `trajectory_id` (or `id`) and/or `task_id` (or `task`), `label` (or
/// `human_label`, `class`), and optionally `steps` (or `step`) — numbers and ranges (`3-5`)
/// separated by spaces, commas or semicolons. A spot-check sheet qualifies.
///
/// # Errors
/// When the file cannot be read or lacks the columns.
pub fn read_labels(path: &Path) -> Result<Vec<LabelRow>, SpotcheckError> {
    const EXPECTED: &str = "a CSV with trajectory_id or task_id, label, and optionally steps";
    let shown = crate::util::display_path(path);
    let (headers, rows) = super::labels::read_rows(path)?;
    let col = |names: &[&str]| headers.iter().position(|h| names.contains(&h.as_str()));
    let id = col(&["trajectory_id", "id"]);
    let task = col(&["task_id", "task"]);
    if id.is_none() && task.is_none() {
        return Err(SpotcheckError::columns(&shown, "trajectory_id or task_id", EXPECTED));
    }
    let label = col(&["label", "human_label", "class"]).ok_or_else(|| SpotcheckError::columns(&shown, "label", EXPECTED))?;
    let steps = col(&["steps", "step"]);
    Ok(rows
        .into_iter()
        .map(|(row, rec)| {
            let get = |i: Option<usize>| i.and_then(|i| rec.get(i)).map(str::trim).filter(|s| !s.is_empty()).map(ToString::to_string);
            LabelRow {
                row,
                trajectory_id: get(id).map(|s| uncell(&s).to_string()),
                task_id: get(task).map(|s| uncell(&s).to_string()),
                label: get(Some(label)).unwrap_or_default(),
                steps: get(steps),
            }
        })
        .collect())
}

/// What the audit needs to know about one trajectory (kept small: runs can be large).
#[derive(Debug, Clone, PartialEq)]
pub struct Facts {
    pub id: String,
    pub task_id: String,
    pub source: Option<String>,
    pub outcome: OutcomeStatus,
    pub termination: Termination,
    pub steps: u32,
    pub assistant_turns: u32,
    pub api_calls: Option<u64>,
    /// The classifier found a budget that fired (a status, or consumption at a known limit).
    pub budget_fired: bool,
    /// The step limit in force for its harness (`--step-limit`, else its profile's).
    pub step_limit: Option<u32>,
}

impl Facts {
    #[must_use]
    pub fn of(t: &Trajectory, v: &Verdict, step_limit: Option<u32>) -> Self {
        Self {
            id: t.id.clone(),
            task_id: t.task_id.clone(),
            source: t.provenance.files.first().map(|f| f.path.clone()),
            outcome: t.outcome.status,
            termination: t.termination.clone(),
            steps: u32::try_from(t.steps.len()).unwrap_or(u32::MAX),
            assistant_turns: v.mechanics.assistant_turns,
            api_calls: t.usage.api_calls,
            budget_fired: t.termination.kind == TerminationKind::Budget || v.classes.iter().any(|c| c == BUDGET_CLASS),
            step_limit,
        }
    }
}

/// Kinds of problem, as printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProblemKind {
    UnknownId,
    AmbiguousId,
    OutsideTaxonomy,
    FailureLabelOnPassed,
    PassedLabelOnFailure,
    BudgetLeft,
    StepBeyondEnd,
    BadStep,
}

impl ProblemKind {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::UnknownId => "unknown-id",
            Self::AmbiguousId => "ambiguous-id",
            Self::OutsideTaxonomy => "outside-taxonomy",
            Self::FailureLabelOnPassed => "failure-label-on-passed",
            Self::PassedLabelOnFailure => "passed-label-on-failure",
            Self::BudgetLeft => "budget-left",
            Self::StepBeyondEnd => "step-beyond-end",
            Self::BadStep => "bad-step",
        }
    }
}

/// One problem with one row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub row: u64,
    pub kind: ProblemKind,
    /// The id or task id as the row gives it.
    pub id: String,
    pub label: String,
    pub message: String,
}

/// The audit of a labels file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AuditReport {
    pub rows: usize,
    pub trajectories: usize,
    /// Rows with an empty label (not checked, not a problem).
    pub unlabelled: Vec<u64>,
    pub problems: Vec<Problem>,
}

impl AuditReport {
    #[must_use]
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Checks every row against the trajectories.
#[must_use]
pub fn audit(rows: &[LabelRow], facts: &[Facts], vocab: &Vocabulary) -> AuditReport {
    let ids = IdIndex::new(facts.iter().map(|f| (f.id.as_str(), f.task_id.as_str(), f.source.as_deref())));
    let mut problems = Vec::new();
    let mut unlabelled = Vec::new();
    for r in rows {
        let shown = r.trajectory_id.clone().or_else(|| r.task_id.clone()).unwrap_or_default();
        let mut push = |kind: ProblemKind, message: String| {
            problems.push(Problem { row: r.row, kind, id: shown.clone(), label: r.label.clone(), message });
        };
        let found = match (&r.trajectory_id, &r.task_id) {
            (Some(id), _) => match ids.lookup(id) {
                Lookup::One(i) => Some(i),
                Lookup::Many(c) => {
                    push(
                        ProblemKind::AmbiguousId,
                        format!("the id names {} trajectories (read from another input root); use the id from this run", c.len()),
                    );
                    None
                }
                Lookup::None => {
                    push(ProblemKind::UnknownId, "no trajectory of the run has this id".into());
                    None
                }
            },
            (None, Some(task)) => {
                let c: Vec<usize> = facts.iter().enumerate().filter(|(_, f)| f.task_id == *task).map(|(i, _)| i).collect();
                match c.as_slice() {
                    [one] => Some(*one),
                    [] => {
                        push(ProblemKind::UnknownId, "no trajectory of the run has this task id".into());
                        None
                    }
                    _ => {
                        push(
                            ProblemKind::AmbiguousId,
                            format!("{} trajectories have this task id (trials or arms); label by trajectory_id", c.len()),
                        );
                        None
                    }
                }
            }
            (None, None) => {
                push(ProblemKind::UnknownId, "the row has neither a trajectory id nor a task id".into());
                None
            }
        };
        let kind = if r.label.is_empty() {
            unlabelled.push(r.row);
            None
        } else {
            let k = vocab.kind(&r.label);
            match &k {
                LabelKind::Flag(f) => push(ProblemKind::OutsideTaxonomy, format!("`{f}` is a flag, not a class")),
                LabelKind::Unknown { suggestion } => push(
                    ProblemKind::OutsideTaxonomy,
                    format!(
                        "not a class of the taxonomy nor `passed`{}",
                        suggestion.as_ref().map(|s| format!("; did you mean `{s}`?")).unwrap_or_default()
                    ),
                ),
                _ => {}
            }
            Some(k)
        };
        let Some(f) = found.map(|i| &facts[i]) else { continue };
        match &kind {
            Some(LabelKind::Class(c)) => {
                if f.outcome == OutcomeStatus::Passed {
                    push(ProblemKind::FailureLabelOnPassed, format!("failure class `{c}` on a trajectory whose verifier passed it"));
                }
                if c == BUDGET_CLASS
                    && let Some(why) = budget_left(f)
                {
                    push(ProblemKind::BudgetLeft, why);
                }
            }
            Some(LabelKind::Passed) if matches!(f.outcome, OutcomeStatus::Failed | OutcomeStatus::Partial | OutcomeStatus::Errored) => {
                push(ProblemKind::PassedLabelOnFailure, format!("`passed` on a trajectory whose outcome is {}", f.outcome.as_str()));
            }
            _ => {}
        }
        if let Some(s) = &r.steps {
            match parse_steps(s) {
                Ok(steps) => {
                    let beyond: Vec<String> = steps.iter().filter(|&&n| n >= u64::from(f.steps)).map(ToString::to_string).collect();
                    if !beyond.is_empty() {
                        push(
                            ProblemKind::StepBeyondEnd,
                            format!(
                                "step {} is past the end: the trajectory has {} steps (0 to {})",
                                beyond.join(", "),
                                f.steps,
                                f.steps.saturating_sub(1)
                            ),
                        );
                    }
                }
                Err(tok) => push(ProblemKind::BadStep, format!("`{tok}` is not a step number or range")),
            }
        }
    }
    AuditReport { rows: rows.len(), trajectories: facts.len(), unlabelled, problems }
}

/// Why a budget label does not fit, when the run ended with budget left: its termination was
/// not a budget, and no known limit was reached. A run whose termination is unknown and
/// whose limits are unknown cannot be judged and passes.
fn budget_left(f: &Facts) -> Option<String> {
    if f.budget_fired {
        return None;
    }
    let mut limits: Vec<(String, f64, f64)> = Vec::new();
    if let (Some(c), Some(l)) = (f.termination.consumed, f.termination.limit) {
        let what = f.termination.budget.map_or_else(|| "budget".to_string(), |b| crate::util::snake(&b));
        limits.push((what, c, l));
    }
    if let Some(l) = f.step_limit {
        #[expect(clippy::cast_precision_loss, reason = "step counts")]
        let used = f.api_calls.unwrap_or(0).max(u64::from(f.assistant_turns)) as f64;
        limits.push(("steps".into(), used, f64::from(l)));
    }
    if limits.iter().any(|(_, c, l)| c >= l) {
        return None;
    }
    if f.termination.kind == TerminationKind::Unknown && limits.is_empty() {
        return None;
    }
    let used: Vec<String> = limits.iter().map(|(w, c, l)| format!("{c} of {l} {w}")).collect();
    let ended = crate::util::snake(&f.termination.kind);
    Some(if used.is_empty() {
        format!("the run ended {ended}, not by a budget, and no limit is known to have been reached")
    } else {
        format!("the run ended {ended}, not by a budget, with budget left ({})", used.join(", "))
    })
}

/// Step numbers and ranges (`2 5-7, 9;10`); the first bad token is the error.
fn parse_steps(s: &str) -> Result<Vec<u64>, String> {
    let mut out = Vec::new();
    for tok in s.split([' ', ',', ';', '\t']).filter(|t| !t.is_empty()) {
        let tok = tok.trim_start_matches('#');
        let parsed = match tok.split_once('-') {
            Some((a, b)) => match (a.parse::<u64>(), b.parse::<u64>()) {
                (Ok(a), Ok(b)) if a <= b => vec![a, b],
                _ => return Err(tok.to_string()),
            },
            None => vec![tok.parse::<u64>().map_err(|_| tok.to_string())?],
        };
        out.extend(parsed);
    }
    Ok(out)
}

/// The report for a terminal.
#[must_use]
pub fn render_text(a: &AuditReport) -> String {
    let t = |s: &str| sanitize::terminal(s).into_owned();
    let rows_with: std::collections::BTreeSet<u64> = a.problems.iter().map(|p| p.row).collect();
    let mut out = format!(
        "coroner spotcheck audit: {} label rows against {} trajectories: {}\n",
        a.rows,
        a.trajectories,
        if a.is_clean() {
            "no problems".to_string()
        } else {
            format!("{} in {}", plural(a.problems.len(), "problem"), plural(rows_with.len(), "row"))
        }
    );
    for p in &a.problems {
        let _ = writeln!(out, "  row {:<4} {:<24} {}  `{}`: {}", p.row, p.kind.as_str(), t(&p.id), t(&p.label), t(&p.message));
    }
    if !a.unlabelled.is_empty() {
        let rows: Vec<String> = a.unlabelled.iter().map(ToString::to_string).collect();
        let _ = writeln!(out, "  rows without a label (not checked): {}", rows.join(", "));
    }
    out
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 { format!("1 {what}") } else { format!("{n} {what}s") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_and_ranges() {
        assert_eq!(parse_steps("2 5-7, #9;10"), Ok(vec![2, 5, 7, 9, 10]));
        assert_eq!(parse_steps("x"), Err("x".into()));
        assert_eq!(parse_steps("7-5"), Err("7-5".into()));
        assert_eq!(parse_steps(""), Ok(vec![]));
    }

    fn facts(kind: TerminationKind, turns: u32, limit: Option<u32>) -> Facts {
        Facts {
            id: "t#1".into(),
            task_id: "t".into(),
            source: None,
            outcome: OutcomeStatus::Failed,
            termination: Termination::of(kind),
            steps: turns * 2,
            assistant_turns: turns,
            api_calls: None,
            budget_fired: false,
            step_limit: limit,
        }
    }

    #[test]
    fn budget_left_needs_a_known_end_or_a_known_limit() {
        assert!(budget_left(&facts(TerminationKind::AgentFinished, 3, None)).is_some());
        assert!(budget_left(&facts(TerminationKind::Unknown, 3, None)).is_none());
        assert!(budget_left(&facts(TerminationKind::Unknown, 3, Some(250))).unwrap().contains("3 of 250 steps"));
        assert!(budget_left(&facts(TerminationKind::Unknown, 250, Some(250))).is_none());
        let mut f = facts(TerminationKind::AgentFinished, 3, None);
        f.budget_fired = true;
        assert!(budget_left(&f).is_none());
    }
}
