//! The predictions file: structured claims about a run, each with the reasoning behind it and
//! what a refutation would mean, written and sealed before the run.
//!
//! # Format
//!
//! `predictions.toml` (schema: `schemas/predictions.schema.json`):
//!
//! ```toml
//! title = "Thinking helps mini-swe-agent hit its budget"
//! alpha = 0.05                      # family-wise level; Holm across the claims
//!
//! [[prediction]]
//! id = "budget-share-think"
//! claim = { metric = "class_rate", arm = "mini-swe-agent, think", class = "budget_exhausted", comparator = ">=", value = 0.15 }
//! rationale = "Reasoning tokens eat the step budget."
//! escape_clause = "If under 15% of its failures are budget exhaustion, reasoning does not eat the budget."
//! # added by `coroner predict retract`, left out of the seal's digest:
//! retracted = { note = "the budget was raised before the run", at = "2026-02-19T10:00:00Z" }
//! ```
//!
//! Rates and differences are fractions (`0.15` is 15%, a difference of `0.25` is 25 pp).
//! `pass_rate_diff` and `class_rate_diff` are `arm` minus `versus`. `==` and `≈` hold within
//! `tolerance` (`≈` needs one; `==` defaults to exact).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A predictions file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PredictionsFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Family-wise significance level. Each claim's interval has one-sided bounds at `1 − alpha`,
    /// and Holm's procedure adjusts the claims' p-values at this level. Default 0.05.
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    /// The claims, as `[[prediction]]` tables (`[[predictions]]` is read too).
    #[serde(rename = "prediction", alias = "predictions", default)]
    pub predictions: Vec<Prediction>,
}

fn default_alpha() -> f64 {
    0.05
}

/// One pre-registered claim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Prediction {
    /// Unique within the file; names the prediction in reports, JUnit and `predict retract`.
    pub id: String,
    pub claim: Claim,
    /// Why you expect it.
    pub rationale: String,
    /// "If X, my understanding is wrong": what a refutation would mean. Printed when refuted.
    pub escape_clause: String,
    /// Set by `coroner predict retract`. A retracted prediction is reported, not evaluated; the
    /// seal's digest leaves this entry out, so retracting does not break the seal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retracted: Option<Retraction>,
}

/// Why and when a prediction was withdrawn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Retraction {
    pub note: String,
    /// RFC 3339 time of the retraction.
    pub at: String,
}

/// A structured claim: `metric(arm [− versus], class) comparator value [± tolerance]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    pub metric: Metric,
    /// The arm the metric is measured on (for differences: the first arm, `arm − versus`).
    pub arm: String,
    /// The second arm of a difference (`pass_rate_diff`, `class_rate_diff`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub versus: Option<String>,
    /// The failure class of `class_count`, `class_rate` and `class_rate_diff`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    pub comparator: Comparator,
    /// A fraction for rates and differences (0.15 = 15%, 0.25 = 25 pp), a number for counts.
    pub value: f64,
    /// For `==` and `≈`: the claim holds when `|metric − value| <= tolerance`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<f64>,
}

/// What a claim measures. Rates have sampling error and are judged with intervals; counts and
/// mechanics are exact and compared as they are (the definitions are the report's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Passed / evaluated (infrastructure failures and unknown outcomes excluded); Wilson
    /// interval, or a task-clustered one with several trials per task.
    PassRate,
    /// Runs whose primary class is `class` (exact).
    ClassCount,
    /// The share of the arm's model failures whose primary class is `class`; Wilson interval.
    ClassRate,
    /// Pass rate of `arm` minus `versus`: paired (Newcombe) when they ran the same tasks,
    /// unpaired (Newcombe hybrid) otherwise.
    PassRateDiff,
    /// `class` share of failures, `arm` minus `versus` (Newcombe hybrid).
    ClassRateDiff,
    /// Runs ended by any budget (exact).
    BudgetRuns,
    /// Runs ended by the wall-clock timeout (exact).
    Timeouts,
    /// The most writes any run made to a single file (exact).
    PeakWrites,
    /// Runs flagged `looping` (exact).
    LoopingRuns,
    /// Unusable replies (format errors) over all runs (exact).
    FormatErrors,
    /// Runs flagged `silent_give_up` (exact).
    SilentGiveUps,
    /// Calls unknown to the registry that executed successfully (exact).
    RegistrySuspectCalls,
    /// Commands that timed out, over all runs (exact).
    CommandTimeouts,
    /// Runs that changed test files (exact).
    EditedTestRuns,
}

/// The kind of quantity a metric is, which decides units, ranges and how it is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// A rate in `[0, 1]` with sampling error.
    Rate,
    /// A difference of two rates in `[-1, 1]` with sampling error.
    Difference,
    /// A count without sampling error.
    Count,
}

impl Metric {
    pub const ALL: &'static [Metric] = &[
        Metric::PassRate,
        Metric::ClassCount,
        Metric::ClassRate,
        Metric::PassRateDiff,
        Metric::ClassRateDiff,
        Metric::BudgetRuns,
        Metric::Timeouts,
        Metric::PeakWrites,
        Metric::LoopingRuns,
        Metric::FormatErrors,
        Metric::SilentGiveUps,
        Metric::RegistrySuspectCalls,
        Metric::CommandTimeouts,
        Metric::EditedTestRuns,
    ];

    #[must_use]
    pub fn quantity(self) -> Quantity {
        match self {
            Metric::PassRate | Metric::ClassRate => Quantity::Rate,
            Metric::PassRateDiff | Metric::ClassRateDiff => Quantity::Difference,
            _ => Quantity::Count,
        }
    }

    /// Whether the claim names a failure class.
    #[must_use]
    pub fn needs_class(self) -> bool {
        matches!(self, Metric::ClassCount | Metric::ClassRate | Metric::ClassRateDiff)
    }

    /// Whether the claim compares two arms.
    #[must_use]
    pub fn needs_versus(self) -> bool {
        self.quantity() == Quantity::Difference
    }

    /// The name in the file (`pass_rate`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Metric::PassRate => "pass_rate",
            Metric::ClassCount => "class_count",
            Metric::ClassRate => "class_rate",
            Metric::PassRateDiff => "pass_rate_diff",
            Metric::ClassRateDiff => "class_rate_diff",
            Metric::BudgetRuns => "budget_runs",
            Metric::Timeouts => "timeouts",
            Metric::PeakWrites => "peak_writes",
            Metric::LoopingRuns => "looping_runs",
            Metric::FormatErrors => "format_errors",
            Metric::SilentGiveUps => "silent_give_ups",
            Metric::RegistrySuspectCalls => "registry_suspect_calls",
            Metric::CommandTimeouts => "command_timeouts",
            Metric::EditedTestRuns => "edited_test_runs",
        }
    }

    /// What the metric counts, for mechanics (as the report's mechanics table words it).
    #[must_use]
    pub fn mechanic_label(self) -> &'static str {
        match self {
            Metric::BudgetRuns => "runs ended by a budget",
            Metric::Timeouts => "runs ended by wall-clock timeout",
            Metric::PeakWrites => "peak writes to a single file",
            Metric::LoopingRuns => "looping runs",
            Metric::FormatErrors => "unusable replies",
            Metric::SilentGiveUps => "silent give-ups",
            Metric::RegistrySuspectCalls => "registry-suspect calls",
            Metric::CommandTimeouts => "command timeouts",
            Metric::EditedTestRuns => "runs that edited test files",
            Metric::ClassCount => "runs",
            _ => "",
        }
    }
}

/// How the metric is compared with `value`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Comparator {
    #[serde(rename = "<")]
    Lt,
    #[serde(rename = "<=")]
    Le,
    #[serde(rename = ">")]
    Gt,
    #[serde(rename = ">=")]
    Ge,
    /// Equal within `tolerance` (default 0: exactly).
    #[serde(rename = "==")]
    Eq,
    /// Approximately: equal within `tolerance`, which is required (`~=` is read too).
    #[serde(rename = "≈", alias = "~=")]
    Approx,
}

impl Comparator {
    #[must_use]
    pub fn symbol(self) -> &'static str {
        match self {
            Comparator::Lt => "<",
            Comparator::Le => "≤",
            Comparator::Gt => ">",
            Comparator::Ge => "≥",
            Comparator::Eq => "=",
            Comparator::Approx => "≈",
        }
    }

    /// `==` or `≈`: a band around the value rather than a side of it.
    #[must_use]
    pub fn is_band(self) -> bool {
        matches!(self, Comparator::Eq | Comparator::Approx)
    }
}

/// The set of values a claim allows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Region {
    pub comparator: Comparator,
    pub value: f64,
    pub tolerance: f64,
}

/// Slack for float comparisons at a band's edges (a count of 6 is within 6 ± 0).
const EPS: f64 = 1e-12;

impl Region {
    #[must_use]
    pub fn of(c: &Claim) -> Self {
        Self { comparator: c.comparator, value: c.value, tolerance: c.tolerance.unwrap_or(0.0).abs() }
    }

    /// Whether the point `x` satisfies the claim.
    #[must_use]
    pub fn holds(&self, x: f64) -> bool {
        self.contains(x, x)
    }

    /// Whether every value in `[lo, hi]` satisfies the claim.
    #[must_use]
    pub fn contains(&self, lo: f64, hi: f64) -> bool {
        let v = self.value;
        match self.comparator {
            Comparator::Lt => hi < v,
            Comparator::Le => hi <= v,
            Comparator::Gt => lo > v,
            Comparator::Ge => lo >= v,
            Comparator::Eq | Comparator::Approx => lo >= v - self.tolerance - EPS && hi <= v + self.tolerance + EPS,
        }
    }

    /// Whether no value in `[lo, hi]` satisfies the claim.
    #[must_use]
    pub fn excludes(&self, lo: f64, hi: f64) -> bool {
        let v = self.value;
        match self.comparator {
            Comparator::Lt => lo >= v,
            Comparator::Le => lo > v,
            Comparator::Gt => hi <= v,
            Comparator::Ge => hi < v,
            Comparator::Eq | Comparator::Approx => hi < v - self.tolerance - EPS || lo > v + self.tolerance + EPS,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_contain_and_exclude() {
        let ge = Region { comparator: Comparator::Ge, value: 0.15, tolerance: 0.0 };
        assert!(ge.contains(0.18, 0.46) && !ge.excludes(0.18, 0.46));
        assert!(!ge.contains(0.10, 0.46) && !ge.excludes(0.10, 0.46));
        assert!(ge.excludes(0.01, 0.14));
        let band = Region { comparator: Comparator::Approx, value: 0.0, tolerance: 0.25 };
        assert!(band.contains(-0.1, 0.2) && band.excludes(0.3, 0.5) && !band.contains(-0.3, 0.1));
        let eq = Region { comparator: Comparator::Eq, value: 6.0, tolerance: 0.0 };
        assert!(eq.holds(6.0) && !eq.holds(5.0));
        let gt = Region { comparator: Comparator::Gt, value: 0.0, tolerance: 0.0 };
        assert!(!gt.holds(0.0) && gt.excludes(0.0, 0.0));
    }

    #[test]
    fn comparators_read_as_written() {
        let c: Claim = toml::from_str("metric = \"timeouts\"\narm = \"a\"\ncomparator = \"≈\"\nvalue = 3\ntolerance = 1").unwrap();
        assert_eq!((c.metric, c.comparator, c.value), (Metric::Timeouts, Comparator::Approx, 3.0));
        let c: Claim = toml::from_str("metric = \"pass_rate\"\narm = \"a\"\ncomparator = \"~=\"\nvalue = 0.2\ntolerance = 0.1").unwrap();
        assert_eq!(c.comparator, Comparator::Approx);
        for m in Metric::ALL {
            let c: Claim = toml::from_str(&format!("metric = \"{}\"\narm = \"a\"\ncomparator = \">=\"\nvalue = 1", m.as_str())).unwrap();
            assert_eq!(c.metric, *m);
        }
    }
}
