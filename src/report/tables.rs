//! The report's tables, computed once from a classified study: arms, failure modes, mechanics,
//! and the per-task matrix. Renderers (terminal, Markdown) and exports (CSV, Parquet, JSON)
//! read these rows and never recompute.

use std::collections::{BTreeMap, BTreeSet};

use polars::prelude::*;
use serde::Serialize;

use super::tally::{ArmTally, Count, GROUPS, Steps};
use crate::rules::Rules;
use crate::stats::{self, DEFAULT_CONFIDENCE, Estimate, Interval, PassMetric, Proportion};
use crate::study::StudyRun;

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
    /// The verdicts of each group of [`GROUPS`] (positions in the arm's verdicts; empty for a
    /// dataset).
    #[serde(skip)]
    pub group_members: [Vec<usize>; 4],
    /// Steps per trajectory (the step chart).
    #[serde(skip)]
    pub steps: Steps,
    /// Verdicts by flag, and by primary class (the gates).
    #[serde(skip)]
    pub flags: BTreeMap<String, u64>,
    #[serde(skip)]
    pub by_primary: BTreeMap<String, u64>,
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

/// The arms row's groups as `(name, positions)`, for the lists that show them.
pub fn arm_groups(r: &ArmRow) -> impl Iterator<Item = (&'static str, &Vec<usize>)> {
    GROUPS.into_iter().zip(&r.group_members)
}

fn arm_row(t: &ArmTally) -> ArmRow {
    let [passed, failed, infra, unknown] = t.groups.clone().map(|g| g.n);
    let (pass_at_1, method) = if let Some(tt) = t.clustered_trials() {
        let s = stats::pass_k_summary(&tt, 1, PassMetric::PassAtK, DEFAULT_CONFIDENCE);
        (s.estimate, "clustered")
    } else {
        (stats::rate_estimate(Proportion::new(passed, t.evaluated), DEFAULT_CONFIDENCE, stats::ProportionMethod::Wilson), "wilson")
    };
    let wall = t.wall_seconds.value();
    let tasks = t.tasks.len() as u64;
    ArmRow {
        arm: t.name.clone(),
        tasks,
        trials: t.trials,
        passed,
        failed,
        infrastructure: infra,
        unknown,
        evaluated: t.evaluated,
        pass_at_1,
        interval_method: method.into(),
        steps_median: t.steps.quantile(0.5),
        wall_seconds_sum: wall,
        wall_seconds_per_task: if tasks == 0 { 0.0 } else { wall / tasks as f64 },
        prompt_tokens: t.prompt_tokens,
        completion_tokens: t.completion_tokens,
        cost_usd: t.cost_usd.value(),
        group_members: t.groups.clone().map(|g| g.members),
        steps: t.steps.clone(),
        flags: t.flags.iter().map(|(f, c)| (f.clone(), c.n)).collect(),
        by_primary: t.primary.iter().map(|(p, c)| (p.clone(), c.n)).collect(),
    }
}

/// Flags shown under worked-then-wrong, in this order.
pub const WORKED_SUBFLAGS: &[&str] = &["unverified", "regressed", "false_done", "edited_tests"];

fn class_rows(arms: &[ArmTally], rules: &Rules) -> Vec<ClassRow> {
    let none = Count::default();
    let mut rows = Vec::new();
    for class in &rules.taxonomy.precedence {
        let who: Vec<&Count> = arms.iter().map(|t| t.primary.get(class).unwrap_or(&none)).collect();
        let per_arm: Vec<(u64, Option<Estimate>)> = who
            .iter()
            .zip(arms)
            .map(|(c, t)| {
                if class == "infrastructure" {
                    (c.n, None)
                } else {
                    (c.n, Some(stats::class_rate(c.n, t.failures.failures, DEFAULT_CONFIDENCE).rate))
                }
            })
            .collect();
        let sub_counts: Vec<Vec<&Count>> = if class == "worked_then_wrong" {
            WORKED_SUBFLAGS.iter().map(|f| arms.iter().map(|t| t.worked_flags.get(*f).unwrap_or(&none)).collect()).collect()
        } else {
            Vec::new()
        };
        let sub = WORKED_SUBFLAGS.iter().zip(&sub_counts).map(|(f, per)| ((*f).to_string(), per.iter().map(|c| c.n).collect())).collect();
        let sub_members = sub_counts.iter().map(|per| per.iter().map(|c| c.members.clone()).collect()).collect();
        rows.push(ClassRow { class: class.clone(), per_arm, sub, members: who.iter().map(|c| c.members.clone()).collect(), sub_members });
    }
    rows
}

/// A mechanics cell: its text, its value, and the runs behind it.
type MechanicsCell = (String, f64, Vec<usize>);

fn mechanics_rows(arms: &[ArmTally]) -> Vec<MechanicsRow> {
    let mut rows = Vec::new();
    // Each measure gives, per arm, its cell, its value, and the runs behind it.
    let mut push = |metric: &str, f: &dyn Fn(&ArmTally) -> MechanicsCell| {
        let mut per_arm = Vec::new();
        let mut values = Vec::new();
        let mut who = Vec::new();
        for t in arms {
            let (cell, value, m) = f(t);
            per_arm.push(cell);
            values.push(value);
            who.push(m);
        }
        rows.push(MechanicsRow { metric: metric.into(), per_arm, values, members: who });
    };
    let runs = |c: &Count| (c.n.to_string(), c.n as f64, c.members.clone());
    push("runs ended by a budget", &|t| {
        let detail: Vec<String> = t.budget_kinds.iter().map(|(b, c)| format!("{b} {c}")).collect();
        let n = t.budget_ended.n;
        (if n == 0 { "0".into() } else { format!("{n} ({})", detail.join(", ")) }, n as f64, t.budget_ended.members.clone())
    });
    push("runs ended by wall-clock timeout", &|t| runs(&t.wall_timeouts));
    push("peak writes to a single file", &|t| match t.peak_writes.as_ref().filter(|(w, _, _)| *w > 0) {
        Some((w, task, at)) => (format!("{w} ({task})"), f64::from(*w), if t.records() { vec![*at] } else { Vec::new() }),
        None => ("0".into(), 0.0, Vec::new()),
    });
    push("looping runs", &|t| runs(t.flag("looping")));
    push("unusable replies (format errors)", &|t| {
        (
            format!("{} ({} recovered)", t.format_errors, t.format_recoveries),
            f64::from(t.format_errors),
            t.format_error_runs.members.clone(),
        )
    });
    push("silent give-ups", &|t| runs(t.flag("silent_give_up")));
    push("registry-suspect calls", &|t| (t.suspect_calls.to_string(), t.suspect_calls as f64, t.suspect_runs.members.clone()));
    push("command timeouts", &|t| (t.command_timeouts.to_string(), f64::from(t.command_timeouts), t.timeout_runs.members.clone()));
    push("runs that edited test files", &|t| runs(&t.test_edit_runs));
    rows
}

fn task_rows(arms: &[ArmTally]) -> Vec<TaskRow> {
    let all: BTreeSet<&str> = arms.iter().flat_map(|t| t.tasks.keys().map(String::as_str)).collect();
    all.into_iter()
        .map(|task| TaskRow {
            task: task.to_string(),
            per_arm: arms
                .iter()
                .map(|t| t.tasks.get(task).map_or_else(|| (0, 0, "-".to_string()), |x| (x.trials, x.passed, x.label())))
                .collect(),
        })
        .collect()
}

/// Builds every table of the report of a study of transcripts (positions kept, for the HTML
/// lists).
#[must_use]
pub fn build(run: &StudyRun, rules: &Rules) -> Report {
    let arms: Vec<ArmTally> = run.arms.iter().map(|a| ArmTally::of(&a.name, &a.verdicts)).collect();
    build_from(run.title.as_deref(), &arms, run.quarantined(), rules)
}

/// Builds every table of the report from the arms' tallies.
#[must_use]
pub fn build_from(title: Option<&str>, arms: &[ArmTally], quarantined: usize, rules: &Rules) -> Report {
    Report {
        title: title.map_or_else(|| "coroner report".into(), str::to_string),
        arms: arms.iter().map(arm_row).collect(),
        classes: class_rows(arms, rules),
        mechanics: mechanics_rows(arms),
        tasks: task_rows(arms),
        comparison: (arms.len() == 2).then(|| super::compare::compare(&arms[0], &arms[1])),
        quarantined,
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
