//! Judges each sealed claim against a classified run: confirmed, refuted or inconclusive.
//!
//! # How a claim is judged
//!
//! Rates and differences have sampling error. Each gets an interval whose ends are one-sided
//! `1 − α` bounds (Wilson for a rate, task-clustered with several trials per task; Newcombe for
//! a paired difference, Newcombe's hybrid for an unpaired one or for class shares), so the
//! interval is two-sided at `1 − 2α` (90% at α = 0.05) — the usual construction for one-sided
//! and equivalence (TOST) claims. The claim is **confirmed** when the interval lies inside the
//! values it allows, **refuted** when it lies outside them, **inconclusive** otherwise.
//!
//! Each claim's p-value is the one-sided test of "the claim is false": the smallest α at which
//! the interval still lies inside the claim (inverting the interval; for Wilson this is exactly
//! the one-sided score test, and for a band claim it is the larger of its two one-sided tests,
//! as in TOST). The p-value against the claim is the mirror: the smallest α at which the
//! interval lies outside it. Holm's step-down adjusts both sets across the claims with sampling
//! error, and the verdict uses the adjusted values, so the chance of confirming (or refuting)
//! any true-null claim by chance stays at most α for the family. A claim whose interval alone
//! decides but whose Holm-adjusted p-value does not is inconclusive, with a note.
//!
//! Counts and mechanics have no sampling error here (they describe this run): they are compared
//! exactly, have p-values of 0 or 1, and are left out of the Holm family.

use serde::Serialize;

use super::load::{Loaded, PredictionsError, resolve_arm};
use super::model::{Claim, Metric, Quantity, Region, Retraction};
use super::seal::{Lock, SealError, SealProblem};
use crate::model::{Budget, TerminationKind, Verdict};
use crate::stats::{
    self, Adjustment, Interval, PairedDiffMethod, PairedTable, PassMetric, Proportion, ProportionMethod, Sides, TaskTrials,
    UnpairedDiffMethod,
};
use crate::study::{ArmRun, StudyRun};

/// What became of a prediction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Confirmed,
    Refuted,
    Inconclusive,
    /// Withdrawn before the check; not evaluated.
    Retracted,
}

impl Status {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Confirmed => "confirmed",
            Status::Refuted => "refuted",
            Status::Inconclusive => "inconclusive",
            Status::Retracted => "retracted",
        }
    }
}

/// One prediction, judged.
#[derive(Debug, Clone, Serialize)]
pub struct Evaluation {
    pub id: String,
    /// The claim in words (`pass rate of A ≥ 15%`).
    pub claim: String,
    pub metric: Metric,
    pub status: Status,
    /// What was measured (`8/26 (30.8%)`); absent for a retracted prediction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimate: Option<f64>,
    /// Each end a one-sided `1 − α` bound; absent for exact metrics.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<Interval>,
    /// How the interval was computed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Compared exactly (no sampling error).
    pub exact: bool,
    /// One-sided p-value of "the claim is false", raw and Holm-adjusted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p_holm: Option<f64>,
    /// One-sided p-value of "the claim is true", raw and Holm-adjusted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p_against: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p_against_holm: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub rationale: String,
    pub escape_clause: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retracted: Option<Retraction>,
}

/// The seal as checked.
#[derive(Debug, Clone, Serialize)]
pub struct SealSummary {
    pub lock: String,
    pub sealed_at: String,
    pub coroner_version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub git_commit: Option<String>,
    pub predictions_sha256: String,
    pub rules_sha256: String,
    pub registries: usize,
    /// The run's first trajectory, when any has a time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub earliest: Option<String>,
    /// Sealed after the run began, or over trajectories that already existed (accepted only
    /// with `--allow-late`).
    pub late: bool,
    /// How many trajectories existed when it was sealed (`seal --allow-late`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sealed_over: Option<u64>,
    /// The seal's time came from `--now` / `COR_NOW`, not the clock.
    pub clock_given: bool,
    /// The sealed commit's date, when it is later than the seal's time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit_after_seal: Option<String>,
}

/// Everything `predict check` reports.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    pub title: String,
    pub alpha: f64,
    pub seal: SealSummary,
    pub predictions: Vec<Evaluation>,
    pub confirmed: usize,
    pub refuted: usize,
    pub inconclusive: usize,
    pub retracted: usize,
    /// Claims with sampling error, the family Holm adjusts over.
    pub family: usize,
    pub quarantined: usize,
}

/// How the measured quantity varies from sample to sample.
#[derive(Debug, Clone)]
enum Sampling {
    Rate(Proportion),
    Clustered(Vec<TaskTrials>),
    Paired(PairedTable),
    Unpaired(Proportion, Proportion),
}

impl Sampling {
    /// The interval whose ends are each a one-sided `1 − tail` bound (two-sided `1 − 2·tail`).
    fn interval(&self, tail: f64) -> Interval {
        let confidence = (1.0 - 2.0 * tail).clamp(0.0, 1.0);
        match self {
            Sampling::Rate(p) => stats::proportion_interval(*p, confidence, Sides::TwoSided, ProportionMethod::Wilson),
            Sampling::Clustered(t) => stats::pass_k_summary(t, 1, PassMetric::PassAtK, confidence).estimate.interval,
            Sampling::Paired(t) => stats::paired_difference(*t, confidence, PairedDiffMethod::default()).interval,
            Sampling::Unpaired(a, b) => stats::unpaired_difference(*a, *b, confidence, UnpairedDiffMethod::NewcombeHybrid).interval,
        }
    }

    fn method(&self) -> &'static str {
        match self {
            Sampling::Rate(_) => "Wilson",
            Sampling::Clustered(_) => "clustered by task",
            Sampling::Paired(_) => "Newcombe paired",
            Sampling::Unpaired(..) => "Newcombe hybrid",
        }
    }

    /// Without observations (no tasks, an arm without failures) nothing can be judged.
    fn is_empty(&self) -> bool {
        match self {
            Sampling::Rate(p) => p.n == 0,
            Sampling::Clustered(t) => t.is_empty(),
            Sampling::Paired(t) => t.n() == 0,
            Sampling::Unpaired(a, b) => a.n == 0 || b.n == 0,
        }
    }
}

/// The smallest `tail` in `[0, 0.5]` at which `pred` holds of the interval, if it holds at 0.5
/// (where the interval is the point estimate). `pred` must be monotone: intervals shrink as
/// `tail` grows.
fn smallest_tail(s: &Sampling, pred: &dyn Fn(Interval) -> bool) -> Option<f64> {
    if !pred(s.interval(0.5)) {
        return None;
    }
    if pred(s.interval(0.0)) {
        return Some(0.0);
    }
    let (mut lo, mut hi) = (0.0f64, 0.5f64);
    for _ in 0..64 {
        let mid = 0.5 * (lo + hi);
        if pred(s.interval(mid)) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// One-sided p-values `(for, against)` the claim, by inverting the interval.
fn p_values(s: &Sampling, r: &Region) -> (f64, f64) {
    let inside = |i: Interval| r.contains(i.lo, i.hi);
    let outside = |i: Interval| r.excludes(i.lo, i.hi);
    let p_for = smallest_tail(s, &inside).or_else(|| smallest_tail(s, &outside).map(|t| 1.0 - t)).unwrap_or(0.5);
    let p_against = smallest_tail(s, &outside).or_else(|| smallest_tail(s, &inside).map(|t| 1.0 - t)).unwrap_or(0.5);
    (p_for, p_against)
}

/// A measured quantity.
enum Measure {
    Exact { value: f64, shown: String },
    Sampled { sampling: Sampling, estimate: f64, shown: String },
}

use crate::report::tally::ArmTally;

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

fn class_share(a: &ArmRun, class: &str) -> Proportion {
    let counts = ArmTally::of(&a.name, &a.verdicts).failures;
    Proportion::new(counts.by_class.get(class).copied().unwrap_or(0), counts.failures)
}

/// Measures the claim's metric on the run (the arms are resolved already).
fn measure(c: &Claim, a: &ArmRun, b: Option<&ArmRun>) -> Measure {
    let count = |n: usize| Measure::Exact { value: n as f64, shown: n.to_string() };
    let runs = |p: &dyn Fn(&Verdict) -> bool| count(a.verdicts.iter().filter(|v| p(v)).count());
    let class = c.class.as_deref().unwrap_or_default();
    match (c.metric, b) {
        (Metric::PassRate, _) => {
            let t = ArmTally::of(&a.name, &a.verdicts);
            let (passed, evaluated) = (t.groups[0].n, t.evaluated);
            if let Some(tasks) = t.clustered_trials() {
                let est = stats::pass_k_summary(&tasks, 1, PassMetric::PassAtK, 0.0).estimate.estimate;
                let shown = format!("{} ({passed}/{evaluated} trials, {} tasks)", pct(est), tasks.len());
                Measure::Sampled { sampling: Sampling::Clustered(tasks), estimate: est, shown }
            } else {
                let p = Proportion::new(passed, evaluated);
                Measure::Sampled { sampling: Sampling::Rate(p), estimate: p.rate(), shown: format!("{passed}/{} ({})", p.n, pct(p.rate())) }
            }
        }
        (Metric::ClassRate, _) => {
            let p = class_share(a, class);
            Measure::Sampled { sampling: Sampling::Rate(p), estimate: p.rate(), shown: format!("{}/{} ({})", p.k, p.n, pct(p.rate())) }
        }
        (Metric::PassRateDiff, Some(b)) => {
            let cmp = crate::report::compare::compare(&ArmTally::of(&a.name, &a.verdicts), &ArmTally::of(&b.name, &b.verdicts));
            let pp = |x: f64| format!("{:+.1} pp", 100.0 * x);
            if cmp.paired {
                let (only_a, only_b) = (cmp.only_a.len() as u64, cmp.only_b.len() as u64);
                let both = cmp.a_passed.saturating_sub(only_a);
                let table = PairedTable::new(both, only_a, only_b, cmp.n.saturating_sub(both + only_a + only_b));
                let est = stats::paired_difference(table, 0.0, PairedDiffMethod::default()).estimate;
                let shown = format!("{} ({}/{} vs {}/{}, paired)", pp(est), cmp.a_passed, cmp.n, cmp.b_passed, cmp.n);
                Measure::Sampled { sampling: Sampling::Paired(table), estimate: est, shown }
            } else {
                let (pa, pb) = (Proportion::new(cmp.a_passed, cmp.n_a), Proportion::new(cmp.b_passed, cmp.n_b));
                let est = pa.rate() - pb.rate();
                let shown = format!("{} ({}/{} vs {}/{}, unpaired)", pp(est), pa.k, pa.n, pb.k, pb.n);
                Measure::Sampled { sampling: Sampling::Unpaired(pa, pb), estimate: est, shown }
            }
        }
        (Metric::ClassRateDiff, Some(b)) => {
            let (pa, pb) = (class_share(a, class), class_share(b, class));
            let est = pa.rate() - pb.rate();
            let shown = format!("{:+.1} pp ({}/{} vs {}/{})", 100.0 * est, pa.k, pa.n, pb.k, pb.n);
            Measure::Sampled { sampling: Sampling::Unpaired(pa, pb), estimate: est, shown }
        }
        // Validation guarantees `versus` for differences; without it there is nothing to compare.
        (Metric::PassRateDiff | Metric::ClassRateDiff, None) => Measure::Exact { value: f64::NAN, shown: "no second arm".into() },
        (Metric::ClassCount, _) => runs(&|v| v.primary.as_deref() == Some(class)),
        (Metric::BudgetRuns, _) => runs(&|v| v.mechanics.termination == TerminationKind::Budget),
        (Metric::Timeouts, _) => runs(&|v| v.mechanics.budget == Some(Budget::WallTime)),
        (Metric::PeakWrites, _) => {
            let best = a.verdicts.iter().max_by_key(|v| (v.mechanics.peak_writes, std::cmp::Reverse(v.task_id.clone())));
            match best.filter(|v| v.mechanics.peak_writes > 0) {
                Some(v) => Measure::Exact {
                    value: f64::from(v.mechanics.peak_writes),
                    shown: format!("{} ({})", v.mechanics.peak_writes, v.task_id),
                },
                None => count(0),
            }
        }
        (Metric::LoopingRuns, _) => runs(&|v| v.has_flag("looping")),
        (Metric::FormatErrors, _) => count(a.verdicts.iter().map(|v| v.mechanics.format_errors as usize).sum()),
        (Metric::SilentGiveUps, _) => runs(&|v| v.has_flag("silent_give_up")),
        (Metric::RegistrySuspectCalls, _) => {
            count(a.verdicts.iter().flat_map(|v| &v.evidence).filter(|e| e.rule == "registry-suspect-call").count())
        }
        (Metric::CommandTimeouts, _) => count(a.verdicts.iter().map(|v| v.mechanics.command_timeouts as usize).sum()),
        (Metric::EditedTestRuns, _) => runs(&|v| !v.mechanics.test_files_changed.is_empty()),
    }
}

/// A claimed value in the metric's units.
fn value_text(q: Quantity, x: f64) -> String {
    let trim = |v: f64| if (v - v.round()).abs() < 1e-9 { format!("{v:.0}") } else { format!("{v:.1}") };
    match q {
        Quantity::Rate => format!("{}%", trim(100.0 * x)),
        Quantity::Difference => format!("{}{} pp", if x > 0.0 { "+" } else { "" }, trim(100.0 * x)),
        Quantity::Count => {
            if (x - x.round()).abs() < 1e-9 {
                format!("{x:.0}")
            } else {
                format!("{x}")
            }
        }
    }
}

fn tolerance_text(q: Quantity, t: f64) -> String {
    match q {
        Quantity::Count => value_text(q, t),
        _ => format!("{} pp", value_text(Quantity::Count, (100.0 * t * 10.0).round() / 10.0)),
    }
}

/// The claim in words.
#[must_use]
pub fn describe(c: &Claim) -> String {
    let q = c.metric.quantity();
    let class = c.class.as_deref().unwrap_or_default();
    let versus = c.versus.as_deref().unwrap_or_default();
    let (arm, versus) = (format!("\"{}\"", c.arm), format!("\"{versus}\""));
    let subject = match c.metric {
        Metric::PassRate => format!("pass rate of {arm}"),
        Metric::ClassRate => format!("{class} share of failures in {arm}"),
        Metric::PassRateDiff => format!("pass rate {arm} − {versus}"),
        Metric::ClassRateDiff => format!("{class} share of failures, {arm} − {versus}"),
        Metric::ClassCount => format!("{class} runs in {arm}"),
        m => format!("{} in {arm}", m.mechanic_label()),
    };
    let tol = c.tolerance.unwrap_or(0.0).abs();
    let rhs = if c.comparator.is_band() && tol > 0.0 {
        format!("{} ± {}", value_text(q, c.value), tolerance_text(q, tol))
    } else {
        value_text(q, c.value)
    };
    format!("{subject} {} {rhs}", c.comparator.symbol())
}

/// The interval in the metric's units.
#[must_use]
pub fn interval_text(metric: Metric, i: Interval) -> String {
    match metric.quantity() {
        Quantity::Rate => format!("[{:.1}%, {:.1}%]", 100.0 * i.lo, 100.0 * i.hi),
        _ => format!("[{:+.1}, {:+.1}] pp", 100.0 * i.lo, 100.0 * i.hi),
    }
}

/// Evaluates every prediction of `loaded` on `run` at the file's α. Arms must have been checked
/// with [`Loaded::check_arms`]; `seal` describes the seal the caller verified.
#[must_use]
pub fn evaluate(loaded: &Loaded, run: &StudyRun, seal: SealSummary) -> CheckReport {
    let alpha = loaded.file.alpha;
    let names: Vec<String> = run.arms.iter().map(|a| a.name.clone()).collect();
    let arm = |n: &str| resolve_arm(&names, n).and_then(|n| run.arm(n));
    let first_run = seal.earliest.as_deref().and_then(crate::util::parse_time);
    let mut out = Vec::new();
    // (index into out, p for, p against) for the Holm family.
    let mut family: Vec<(usize, f64, f64)> = Vec::new();
    for p in &loaded.file.predictions {
        let c = &p.claim;
        let mut e = Evaluation {
            id: p.id.clone(),
            claim: describe(c),
            metric: c.metric,
            status: Status::Inconclusive,
            observed: None,
            estimate: None,
            interval: None,
            method: None,
            exact: c.metric.quantity() == Quantity::Count,
            p: None,
            p_holm: None,
            p_against: None,
            p_against_holm: None,
            note: None,
            rationale: p.rationale.clone(),
            escape_clause: p.escape_clause.clone(),
            retracted: p.retracted.clone(),
        };
        if let Some(r) = &p.retracted {
            e.status = Status::Retracted;
            let at = crate::util::parse_time(&r.at);
            if let (Some(at), Some(first)) = (at, first_run)
                && at > first
            {
                e.note = Some(format!(
                    "retracted at {} — after the run's first trajectory ({}), when results may have been seen",
                    r.at,
                    seal.earliest.clone().unwrap_or_default()
                ));
            }
            out.push(e);
            continue;
        }
        let (Some(a), b) = (arm(&c.arm), c.versus.as_deref().map(arm)) else {
            e.note = Some(format!("arm `{}` is not in this run", c.arm));
            out.push(e);
            continue;
        };
        let b = match b {
            Some(Some(b)) => Some(b),
            Some(None) => {
                e.note = Some(format!("arm `{}` is not in this run", c.versus.clone().unwrap_or_default()));
                out.push(e);
                continue;
            }
            None => None,
        };
        let region = Region::of(c);
        match measure(c, a, b) {
            Measure::Exact { value, shown } => {
                let holds = region.holds(value);
                e.status = if holds { Status::Confirmed } else { Status::Refuted };
                e.estimate = Some(value);
                e.observed = Some(shown);
                let (pf, pa) = if holds { (0.0, 1.0) } else { (1.0, 0.0) };
                (e.p, e.p_holm, e.p_against, e.p_against_holm) = (Some(pf), Some(pf), Some(pa), Some(pa));
            }
            Measure::Sampled { sampling, estimate, shown } => {
                e.estimate = Some(estimate);
                e.observed = Some(shown);
                e.interval = Some(sampling.interval(alpha));
                e.method = Some(sampling.method().into());
                if sampling.is_empty() {
                    e.note = Some("no observations: nothing to judge".into());
                    (e.p, e.p_holm, e.p_against, e.p_against_holm) = (Some(1.0), Some(1.0), Some(1.0), Some(1.0));
                } else {
                    let (pf, pa) = p_values(&sampling, &region);
                    e.p = Some(pf);
                    e.p_against = Some(pa);
                    family.push((out.len(), pf, pa));
                }
            }
        }
        out.push(e);
    }
    let adj_for = stats::adjust(&family.iter().map(|f| f.1).collect::<Vec<_>>(), Adjustment::Holm, alpha);
    let adj_against = stats::adjust(&family.iter().map(|f| f.2).collect::<Vec<_>>(), Adjustment::Holm, alpha);
    let m = family.len();
    for ((i, pf, pa), (af, aa)) in family.iter().zip(adj_for.iter().zip(&adj_against)) {
        let e = &mut out[*i];
        e.p_holm = Some(af.p_adjusted);
        e.p_against_holm = Some(aa.p_adjusted);
        e.status = if af.reject {
            Status::Confirmed
        } else if aa.reject {
            Status::Refuted
        } else {
            if *pf <= alpha {
                e.note = Some(format!(
                    "the interval satisfies the claim, but not after Holm across {m} claims (adjusted p = {:.3})",
                    af.p_adjusted
                ));
            } else if *pa <= alpha {
                e.note = Some(format!(
                    "the interval excludes the claim, but not after Holm across {m} claims (adjusted p = {:.3})",
                    aa.p_adjusted
                ));
            }
            Status::Inconclusive
        };
    }
    let count = |s: Status| out.iter().filter(|e| e.status == s).count();
    CheckReport {
        title: loaded.file.title.clone().unwrap_or_else(|| loaded.shown.clone()),
        alpha,
        confirmed: count(Status::Confirmed),
        refuted: count(Status::Refuted),
        inconclusive: count(Status::Inconclusive),
        retracted: count(Status::Retracted),
        family: m,
        quarantined: run.quarantined(),
        seal,
        predictions: out,
    }
}

/// Why a check stopped before judging.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum CheckError {
    #[error(transparent)]
    #[diagnostic(transparent)]
    Seal(SealError),
    #[error(transparent)]
    #[diagnostic(transparent)]
    Predictions(#[from] PredictionsError),
}

/// Verifies the seal of `loaded` against `run` and, when it holds, judges every claim.
///
/// The seal holds when the predictions (retractions left out), the rules and the registries in
/// force have the sealed digests, and the seal is not later than the run's first trajectory
/// (unless `allow_late`, which reports it as late).
///
/// # Errors
/// Every way the seal does not hold, in one error; then claims naming a class the rules lack
/// or an arm the run lacks.
#[expect(clippy::result_large_err, reason = "the diagnostic carries its source for the labels; it is built once, on the way out")]
pub fn check(
    loaded: &Loaded,
    lock: &Lock,
    lock_shown: &str,
    run: &StudyRun,
    classes: &[String],
    allow_late: bool,
) -> Result<CheckReport, CheckError> {
    let digest = super::digest::predictions_digest(&loaded.text).unwrap_or_default();
    let mut problems = super::seal::verify(lock, &digest, &run.rules_digest, &run.registries);
    let first = super::seal::earliest(run.arms.iter().filter_map(|a| a.earliest.as_deref()));
    let sealed = crate::util::parse_time(&lock.sealed_at);
    let after_first = match (sealed, first) {
        (Some(s), Some((f, _))) => s > f,
        // A lock whose time does not parse cannot show it preceded the run.
        (None, Some(_)) => true,
        _ => false,
    };
    if after_first && !allow_late {
        problems
            .push(SealProblem::Late { sealed_at: lock.sealed_at.clone(), earliest: first.map(|f| f.1.to_string()).unwrap_or_default() });
    }
    // Whatever its time says, a seal made over existing trajectories could have read them.
    if let Some(n) = lock.sealed_over
        && !allow_late
    {
        problems.push(SealProblem::SealedOver { trajectories: n });
    }
    let late = after_first || lock.sealed_over.is_some();
    if !problems.is_empty() {
        return Err(CheckError::Seal(SealError::new(lock_shown, problems)));
    }
    loaded.check_classes(classes)?;
    loaded.check_arms(&run.arms.iter().map(|a| a.name.clone()).collect::<Vec<_>>())?;
    let seal = SealSummary {
        lock: lock_shown.into(),
        sealed_at: lock.sealed_at.clone(),
        coroner_version: lock.coroner_version.clone(),
        git_commit: lock.git_commit.clone(),
        predictions_sha256: lock.predictions_sha256.clone(),
        rules_sha256: lock.rules_sha256.clone(),
        registries: lock.registries.len(),
        earliest: first.map(|f| f.1.to_string()),
        late,
        sealed_over: lock.sealed_over,
        clock_given: lock.clock.as_deref() == Some("given"),
        commit_after_seal: None,
    };
    Ok(evaluate(loaded, run, seal))
}

impl CheckReport {
    /// Whether the check gates (a prediction was refuted).
    #[must_use]
    pub fn refuted_any(&self) -> bool {
        self.refuted > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predict::model::Comparator;

    #[test]
    fn p_values_invert_the_wilson_bound_as_the_score_test() {
        // 8/26 against "≥ 15%": one-sided score test z = (p̂ − 0.15)/sqrt(0.15·0.85/26).
        let s = Sampling::Rate(Proportion::new(8, 26));
        let r = Region { comparator: Comparator::Ge, value: 0.15, tolerance: 0.0 };
        let (pf, pa) = p_values(&s, &r);
        let z = (8.0 / 26.0 - 0.15) / (0.15f64 * 0.85 / 26.0).sqrt();
        let expected = 1.0 - statrs::distribution::ContinuousCDF::cdf(&statrs::distribution::Normal::standard(), z);
        assert!((pf - expected).abs() < 1e-9, "{pf} vs {expected}");
        assert!((pa - (1.0 - expected)).abs() < 1e-9, "{pa}");
        // The bound at α is exactly where the p-value crosses α.
        let i = s.interval(pf);
        assert!((i.lo - 0.15).abs() < 1e-9, "{i:?}");
    }

    #[test]
    fn band_claims_take_the_larger_one_sided_p_value() {
        let s = Sampling::Paired(PairedTable::new(5, 3, 2, 24));
        let band = Region { comparator: Comparator::Approx, value: 0.0, tolerance: 0.25 };
        let lower = Region { comparator: Comparator::Ge, value: -0.25, tolerance: 0.0 };
        let upper = Region { comparator: Comparator::Le, value: 0.25, tolerance: 0.0 };
        let (pb, _) = p_values(&s, &band);
        let (pl, _) = p_values(&s, &lower);
        let (pu, _) = p_values(&s, &upper);
        assert!((pb - pl.max(pu)).abs() < 1e-9, "{pb} {pl} {pu}");
        assert!(pb < 0.05, "±25 pp around +2.9 pp at 34 paired tasks is confirmed: {pb}");
    }

    #[test]
    fn degenerate_samples_stay_finite() {
        for s in [
            Sampling::Rate(Proportion::new(0, 34)),
            Sampling::Rate(Proportion::new(34, 34)),
            Sampling::Paired(PairedTable::new(0, 0, 0, 34)),
            Sampling::Unpaired(Proportion::new(0, 5), Proportion::new(5, 5)),
            Sampling::Clustered(vec![TaskTrials::new(3, 1), TaskTrials::new(3, 3)]),
        ] {
            for cmp in [Comparator::Ge, Comparator::Lt, Comparator::Approx] {
                let (pf, pa) = p_values(&s, &Region { comparator: cmp, value: 0.0, tolerance: 0.1 });
                assert!((0.0..=1.0).contains(&pf) && (0.0..=1.0).contains(&pa), "{s:?} {cmp:?}: {pf} {pa}");
            }
        }
    }

    #[test]
    fn claims_read_in_their_units() {
        let c: Claim =
            toml::from_str("metric = \"class_rate\"\narm = \"A\"\nclass = \"budget_exhausted\"\ncomparator = \">=\"\nvalue = 0.15")
                .unwrap();
        assert_eq!(describe(&c), "budget_exhausted share of failures in \"A\" ≥ 15%");
        let c: Claim =
            toml::from_str("metric = \"pass_rate_diff\"\narm = \"A\"\nversus = \"B\"\ncomparator = \"≈\"\nvalue = 0\ntolerance = 0.25")
                .unwrap();
        assert_eq!(describe(&c), "pass rate \"A\" − \"B\" ≈ 0 pp ± 25 pp");
        let c: Claim = toml::from_str("metric = \"timeouts\"\narm = \"A\"\ncomparator = \"<=\"\nvalue = 3").unwrap();
        assert_eq!(describe(&c), "runs ended by wall-clock timeout in \"A\" ≤ 3");
        assert_eq!(interval_text(Metric::PassRateDiff, Interval::new(-0.081, 0.139)), "[-8.1, +13.9] pp");
    }
}
