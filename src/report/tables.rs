//! The report's tables, computed once from a classified study: arms, failure modes, mechanics,
//! and the per-task matrix. Renderers (terminal, Markdown) and exports (CSV, Parquet, JSON)
//! read these rows and never recompute.

use std::collections::{BTreeMap, BTreeSet};

use polars::prelude::*;
use serde::Serialize;

use crate::model::{OutcomeStatus, Verdict};
use crate::rules::Rules;
use crate::stats::{self, DEFAULT_CONFIDENCE, Estimate, Interval, PassMetric, Proportion, TaskTrials};
use crate::study::{ArmRun, StudyRun};
use crate::util::snake;

/// One arm's headline numbers.
#[derive(Debug, Clone, Serialize)]
pub struct ArmRow {
    pub arm: String,
    pub tasks: u64,
    pub trials: u64,
    pub passed: u64,
    pub failed: u64,
    /// Infrastructure failures: excluded from the pass rate, counted here.
    pub infrastructure: u64,
    /// Trajectories without a verdict: excluded, counted.
    pub unknown: u64,
    /// Trajectories the pass rate is computed over.
    pub evaluated: u64,
    /// pass@1 (with several trials per task: the mean over tasks of each task's pass rate).
    pub pass_at_1: Estimate,
    /// How the interval was computed (`wilson`, or `clustered` by task with several trials).
    pub interval_method: String,
    pub steps_median: f64,
    pub wall_seconds_sum: f64,
    pub wall_seconds_per_task: f64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cost_usd: f64,
}

/// One failure class across arms.
#[derive(Debug, Clone, Serialize)]
pub struct ClassRow {
    pub class: String,
    /// Per arm: count, and share of the arm's model failures with its Wilson interval
    /// (`None` for infrastructure, which is not a model failure).
    pub per_arm: Vec<(u64, Option<Estimate>)>,
    /// Sub-rows: `(flag, counts per arm)` for worked-then-wrong.
    pub sub: Vec<(String, Vec<u64>)>,
    /// Per arm, the verdicts counted (positions in the arm's verdicts); per sub-row, the same.
    #[serde(skip)]
    pub members: Vec<Vec<usize>>,
    #[serde(skip)]
    pub sub_members: Vec<Vec<Vec<usize>>>,
}

/// One mechanics measure across arms.
#[derive(Debug, Clone, Serialize)]
pub struct MechanicsRow {
    pub metric: String,
    pub per_arm: Vec<String>,
    pub values: Vec<f64>,
    /// Per arm, the runs the measure counts or sums over (positions in the arm's verdicts), so
    /// a report can link the number to them.
    #[serde(skip)]
    pub members: Vec<Vec<usize>>,
}

/// One task across arms.
#[derive(Debug, Clone, Serialize)]
pub struct TaskRow {
    pub task: String,
    /// Per arm: `(trials, passed, label)`; label is `passed`, the primary class, or `-` when the
    /// arm did not run the task.
    pub per_arm: Vec<(u64, u64, String)>,
}

/// Everything a report shows.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub title: String,
    pub arms: Vec<ArmRow>,
    pub classes: Vec<ClassRow>,
    pub mechanics: Vec<MechanicsRow>,
    pub tasks: Vec<TaskRow>,
    pub comparison: Option<super::compare::Comparison>,
    pub quarantined: usize,
    /// `--fail-if` thresholds, each applied to each arm it names; empty without any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gates: Vec<super::gate::GateCheck>,
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len().is_multiple_of(2) { (v[m - 1] + v[m]) / 2.0 } else { v[m] }
}

/// The verdicts a pass rate is computed over: neither infrastructure failures nor unknown
/// outcomes.
#[must_use]
pub fn evaluated(vs: &[Verdict]) -> Vec<&Verdict> {
    vs.iter().filter(|v| is_evaluated(v)).collect()
}

fn is_evaluated(v: &Verdict) -> bool {
    !v.is_infrastructure() && v.outcome != OutcomeStatus::Unknown
}

/// Trials and passes per task, in task order, when some task ran more than once: pass@1 is then
/// the mean over tasks, with an interval clustered by task (the report and the predictions
/// must agree on it).
#[must_use]
pub fn clustered_trials(eval: &[&Verdict]) -> Option<Vec<TaskTrials>> {
    let mut per_task: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for v in eval {
        let e = per_task.entry(v.task_id.as_str()).or_default();
        e.0 += 1;
        e.1 += u64::from(v.outcome == OutcomeStatus::Passed);
    }
    per_task.values().any(|(n, _)| *n > 1).then(|| per_task.values().map(|(n, k)| TaskTrials::new(*n, *k)).collect())
}

/// The groups of an arm's verdicts its row counts — `passed` (of those evaluated), `failed`
/// (classified, not infrastructure), `infrastructure`, `unknown` — as positions in its verdicts.
#[must_use]
pub fn arm_groups(a: &ArmRun) -> [(&'static str, Vec<usize>); 4] {
    [
        ("passed", members(a, &|v| is_evaluated(v) && v.outcome == OutcomeStatus::Passed)),
        ("failed", members(a, &|v| v.primary.is_some() && !v.is_infrastructure())),
        ("infrastructure", members(a, &|v| v.is_infrastructure())),
        ("unknown", members(a, &|v| v.outcome == OutcomeStatus::Unknown)),
    ]
}

fn arm_row(a: &ArmRun) -> ArmRow {
    let vs = &a.verdicts;
    let tasks: BTreeSet<&str> = vs.iter().map(|v| v.task_id.as_str()).collect();
    let [(_, passed), (_, failed), (_, infra), (_, unknown)] = arm_groups(a);
    let (passed, failed, infra, unknown) = (passed.len() as u64, failed.len() as u64, infra.len() as u64, unknown.len() as u64);
    let eval = evaluated(vs);
    let (pass_at_1, method) = if let Some(tt) = clustered_trials(&eval) {
        let s = stats::pass_k_summary(&tt, 1, PassMetric::PassAtK, DEFAULT_CONFIDENCE);
        (s.estimate, "clustered")
    } else {
        (stats::rate_estimate(Proportion::new(passed, eval.len() as u64), DEFAULT_CONFIDENCE, stats::ProportionMethod::Wilson), "wilson")
    };
    let wall: f64 = vs.iter().filter_map(|v| v.mechanics.wall_seconds).sum();
    ArmRow {
        arm: a.name.clone(),
        tasks: tasks.len() as u64,
        trials: vs.len() as u64,
        passed,
        failed,
        infrastructure: infra,
        unknown,
        evaluated: eval.len() as u64,
        pass_at_1,
        interval_method: method.into(),
        steps_median: median(vs.iter().map(|v| f64::from(v.mechanics.steps)).collect()),
        wall_seconds_sum: wall,
        wall_seconds_per_task: if tasks.is_empty() { 0.0 } else { wall / tasks.len() as f64 },
        prompt_tokens: crate::util::sat_sum(vs.iter().filter_map(|v| v.mechanics.prompt_tokens)),
        completion_tokens: crate::util::sat_sum(vs.iter().filter_map(|v| v.mechanics.completion_tokens)),
        cost_usd: vs.iter().filter_map(|v| v.mechanics.cost_usd).sum(),
    }
}

/// Flags shown under worked-then-wrong, in this order.
pub const WORKED_SUBFLAGS: &[&str] = &["unverified", "regressed", "false_done", "edited_tests"];

fn class_rows(run: &StudyRun, rules: &Rules) -> Vec<ClassRow> {
    let counts: Vec<stats::ClassCounts> = run.arms.iter().map(|a| super::compare::class_counts(&a.verdicts)).collect();
    let mut rows = Vec::new();
    for class in &rules.taxonomy.precedence {
        let who: Vec<Vec<usize>> = run.arms.iter().map(|a| members(a, &|v| v.primary.as_deref() == Some(class.as_str()))).collect();
        let per_arm: Vec<(u64, Option<Estimate>)> = who
            .iter()
            .zip(&counts)
            .map(|(m, c)| {
                let n = m.len() as u64;
                if class == "infrastructure" { (n, None) } else { (n, Some(stats::class_rate(n, c.failures, DEFAULT_CONFIDENCE).rate)) }
            })
            .collect();
        let sub_members: Vec<Vec<Vec<usize>>> = if class == "worked_then_wrong" {
            WORKED_SUBFLAGS
                .iter()
                .map(|f| {
                    run.arms.iter().map(|a| members(a, &|v| v.primary.as_deref() == Some("worked_then_wrong") && v.has_flag(f))).collect()
                })
                .collect()
        } else {
            Vec::new()
        };
        let sub = WORKED_SUBFLAGS
            .iter()
            .zip(&sub_members)
            .map(|(f, per)| ((*f).to_string(), per.iter().map(|m| m.len() as u64).collect()))
            .collect();
        rows.push(ClassRow { class: class.clone(), per_arm, sub, members: who, sub_members });
    }
    rows
}

/// Positions in `a.verdicts` of the verdicts `p` accepts.
fn members(a: &ArmRun, p: &dyn Fn(&Verdict) -> bool) -> Vec<usize> {
    a.verdicts.iter().enumerate().filter(|(_, v)| p(v)).map(|(i, _)| i).collect()
}

/// A mechanics cell: its text, its value, and the runs behind it.
type MechanicsCell = (String, f64, Vec<usize>);

fn mechanics_rows(run: &StudyRun) -> Vec<MechanicsRow> {
    let mut rows = Vec::new();
    // Each measure gives, per arm, its cell, its value, and the runs behind it.
    let mut push = |metric: &str, f: &dyn Fn(&ArmRun) -> MechanicsCell| {
        let mut per_arm = Vec::new();
        let mut values = Vec::new();
        let mut who = Vec::new();
        for a in &run.arms {
            let (cell, value, m) = f(a);
            per_arm.push(cell);
            values.push(value);
            who.push(m);
        }
        rows.push(MechanicsRow { metric: metric.into(), per_arm, values, members: who });
    };
    let runs = |a: &ArmRun, p: &dyn Fn(&Verdict) -> bool| {
        let m = members(a, p);
        (m.len().to_string(), m.len() as f64, m)
    };
    push("runs ended by a budget", &|a| {
        let m = members(a, &|v| v.mechanics.termination == crate::model::TerminationKind::Budget);
        let mut by: BTreeMap<String, usize> = BTreeMap::new();
        for &i in &m {
            *by.entry(a.verdicts[i].mechanics.budget.map_or_else(|| "unspecified".into(), |b| snake(&b))).or_default() += 1;
        }
        let detail: Vec<String> = by.iter().map(|(b, c)| format!("{b} {c}")).collect();
        let n = m.len();
        (if n == 0 { "0".into() } else { format!("{n} ({})", detail.join(", ")) }, n as f64, m)
    });
    push("runs ended by wall-clock timeout", &|a| runs(a, &|v| v.mechanics.budget == Some(crate::model::Budget::WallTime)));
    push("peak writes to a single file", &|a| {
        let best = a.verdicts.iter().enumerate().max_by_key(|(_, v)| (v.mechanics.peak_writes, std::cmp::Reverse(v.task_id.clone())));
        match best.filter(|(_, v)| v.mechanics.peak_writes > 0) {
            Some((i, v)) => (format!("{} ({})", v.mechanics.peak_writes, v.task_id), f64::from(v.mechanics.peak_writes), vec![i]),
            None => ("0".into(), 0.0, Vec::new()),
        }
    });
    push("looping runs", &|a| runs(a, &|v| v.has_flag("looping")));
    push("unusable replies (format errors)", &|a| {
        let n = a.verdicts.iter().map(|v| v.mechanics.format_errors).fold(0u32, u32::saturating_add);
        let r = a.verdicts.iter().map(|v| v.mechanics.format_recoveries).fold(0u32, u32::saturating_add);
        (format!("{n} ({r} recovered)"), f64::from(n), members(a, &|v| v.mechanics.format_errors > 0))
    });
    push("silent give-ups", &|a| runs(a, &|v| v.has_flag("silent_give_up")));
    push("registry-suspect calls", &|a| {
        let suspect = |v: &Verdict| v.evidence.iter().filter(|e| e.rule == "registry-suspect-call").count();
        let n: usize = a.verdicts.iter().map(suspect).sum();
        (n.to_string(), n as f64, members(a, &|v| suspect(v) > 0))
    });
    push("command timeouts", &|a| {
        let n = a.verdicts.iter().map(|v| v.mechanics.command_timeouts).fold(0u32, u32::saturating_add);
        (n.to_string(), f64::from(n), members(a, &|v| v.mechanics.command_timeouts > 0))
    });
    push("runs that edited test files", &|a| runs(a, &|v| !v.mechanics.test_files_changed.is_empty()));
    rows
}

fn task_rows(run: &StudyRun) -> Vec<TaskRow> {
    // Each arm's verdicts grouped by task once, so the matrix costs n log n, not tasks × n.
    let grouped: Vec<BTreeMap<&str, Vec<&Verdict>>> = run
        .arms
        .iter()
        .map(|a| {
            let mut m: BTreeMap<&str, Vec<&Verdict>> = BTreeMap::new();
            for v in &a.verdicts {
                m.entry(v.task_id.as_str()).or_default().push(v);
            }
            m
        })
        .collect();
    let all: BTreeSet<&str> = grouped.iter().flat_map(|g| g.keys().copied()).collect();
    all.into_iter()
        .map(|task| TaskRow {
            task: task.to_string(),
            per_arm: grouped
                .iter()
                .map(|g| {
                    let Some(vs) = g.get(task) else { return (0, 0, "-".to_string()) };
                    let passed = vs.iter().filter(|v| v.outcome == OutcomeStatus::Passed).count() as u64;
                    let label = if passed * 2 > vs.len() as u64 {
                        "passed".to_string()
                    } else {
                        let mut c: BTreeMap<&str, usize> = BTreeMap::new();
                        for v in vs {
                            *c.entry(v.primary.as_deref().unwrap_or(v.outcome.as_str())).or_default() += 1;
                        }
                        c.into_iter().max_by_key(|(k, n)| (*n, std::cmp::Reverse(*k))).map(|(k, _)| k.to_string()).unwrap_or_default()
                    };
                    (vs.len() as u64, passed, label)
                })
                .collect(),
        })
        .collect()
}

/// Builds every table of the report.
#[must_use]
pub fn build(run: &StudyRun, rules: &Rules) -> Report {
    let comparison = (run.arms.len() == 2)
        .then(|| super::compare::compare(&run.arms[0].name, &run.arms[0].verdicts, &run.arms[1].name, &run.arms[1].verdicts));
    Report {
        title: run.title.clone().unwrap_or_else(|| "coroner report".into()),
        arms: run.arms.iter().map(arm_row).collect(),
        classes: class_rows(run, rules),
        mechanics: mechanics_rows(run),
        tasks: task_rows(run),
        comparison,
        quarantined: run.quarantined(),
        gates: Vec::new(),
    }
}

impl Report {
    /// The arms table as a DataFrame (CSV/Parquet/JSON export).
    ///
    /// # Errors
    /// When polars cannot build it.
    pub fn arms_frame(&self) -> PolarsResult<DataFrame> {
        let a = &self.arms;
        DataFrame::new_infer_height(vec![
            Column::new("arm".into(), a.iter().map(|r| r.arm.clone()).collect::<Vec<_>>()),
            Column::new("tasks".into(), a.iter().map(|r| r.tasks).collect::<Vec<_>>()),
            Column::new("trials".into(), a.iter().map(|r| r.trials).collect::<Vec<_>>()),
            Column::new("evaluated".into(), a.iter().map(|r| r.evaluated).collect::<Vec<_>>()),
            Column::new("passed".into(), a.iter().map(|r| r.passed).collect::<Vec<_>>()),
            Column::new("failed".into(), a.iter().map(|r| r.failed).collect::<Vec<_>>()),
            Column::new("infrastructure".into(), a.iter().map(|r| r.infrastructure).collect::<Vec<_>>()),
            Column::new("unknown".into(), a.iter().map(|r| r.unknown).collect::<Vec<_>>()),
            Column::new("pass_at_1".into(), a.iter().map(|r| r.pass_at_1.estimate).collect::<Vec<_>>()),
            Column::new("ci_low".into(), a.iter().map(|r| r.pass_at_1.interval.lo).collect::<Vec<_>>()),
            Column::new("ci_high".into(), a.iter().map(|r| r.pass_at_1.interval.hi).collect::<Vec<_>>()),
            Column::new("interval_method".into(), a.iter().map(|r| r.interval_method.clone()).collect::<Vec<_>>()),
            Column::new("steps_median".into(), a.iter().map(|r| r.steps_median).collect::<Vec<_>>()),
            Column::new("wall_seconds_sum".into(), a.iter().map(|r| r.wall_seconds_sum).collect::<Vec<_>>()),
            Column::new("wall_seconds_per_task".into(), a.iter().map(|r| r.wall_seconds_per_task).collect::<Vec<_>>()),
            Column::new("prompt_tokens".into(), a.iter().map(|r| r.prompt_tokens).collect::<Vec<_>>()),
            Column::new("completion_tokens".into(), a.iter().map(|r| r.completion_tokens).collect::<Vec<_>>()),
            Column::new("cost_usd".into(), a.iter().map(|r| r.cost_usd).collect::<Vec<_>>()),
        ])
    }

    /// Failure modes in long form: one row per arm and class.
    ///
    /// # Errors
    /// When polars cannot build it.
    pub fn failure_modes_frame(&self) -> PolarsResult<DataFrame> {
        let (mut arm, mut class, mut count, mut share, mut lo, mut hi) = (vec![], vec![], vec![], vec![], vec![], vec![]);
        for row in &self.classes {
            for (i, (n, est)) in row.per_arm.iter().enumerate() {
                arm.push(self.arms[i].arm.clone());
                class.push(row.class.clone());
                count.push(*n);
                share.push(est.map(|e| e.estimate));
                lo.push(est.map(|e| e.interval.lo));
                hi.push(est.map(|e| e.interval.hi));
            }
            for (flag, per) in &row.sub {
                for (i, n) in per.iter().enumerate() {
                    arm.push(self.arms[i].arm.clone());
                    class.push(format!("{}:{flag}", row.class));
                    count.push(*n);
                    share.push(None);
                    lo.push(None);
                    hi.push(None);
                }
            }
        }
        DataFrame::new_infer_height(vec![
            Column::new("arm".into(), arm),
            Column::new("class".into(), class),
            Column::new("count".into(), count),
            Column::new("share_of_failures".into(), share),
            Column::new("ci_low".into(), lo),
            Column::new("ci_high".into(), hi),
        ])
    }

    /// Mechanics in long form.
    ///
    /// # Errors
    /// When polars cannot build it.
    pub fn mechanics_frame(&self) -> PolarsResult<DataFrame> {
        let (mut arm, mut metric, mut value, mut shown) = (vec![], vec![], vec![], vec![]);
        for row in &self.mechanics {
            for (i, (v, s)) in row.values.iter().zip(&row.per_arm).enumerate() {
                arm.push(self.arms[i].arm.clone());
                metric.push(row.metric.clone());
                value.push(*v);
                shown.push(s.clone());
            }
        }
        DataFrame::new_infer_height(vec![
            Column::new("arm".into(), arm),
            Column::new("metric".into(), metric),
            Column::new("value".into(), value),
            Column::new("shown".into(), shown),
        ])
    }

    /// The task × arm matrix in long form.
    ///
    /// # Errors
    /// When polars cannot build it.
    pub fn tasks_frame(&self) -> PolarsResult<DataFrame> {
        let (mut task, mut arm, mut trials, mut passed, mut label) = (vec![], vec![], vec![], vec![], vec![]);
        for row in &self.tasks {
            for (i, (n, p, l)) in row.per_arm.iter().enumerate() {
                task.push(row.task.clone());
                arm.push(self.arms[i].arm.clone());
                trials.push(*n);
                passed.push(*p);
                label.push(l.clone());
            }
        }
        DataFrame::new_infer_height(vec![
            Column::new("task_id".into(), task),
            Column::new("arm".into(), arm),
            Column::new("trials".into(), trials),
            Column::new("passed".into(), passed),
            Column::new("result".into(), label),
        ])
    }
}

/// `lo`–`hi` as percentages with one decimal.
#[must_use]
pub fn interval_pct(i: Interval) -> String {
    format!("[{:.1}, {:.1}]", 100.0 * i.lo, 100.0 * i.hi)
}
