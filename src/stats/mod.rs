//! Statistics that separate a real difference from noise: intervals for one rate, paired and
//! unpaired comparisons of two arms, k-trial metrics with task-clustered errors, power and the
//! minimum detectable difference, multiple-comparison adjustment, rater agreement, failure-class
//! rates and a plain-language verdict. Every function returns finite, documented values on edge
//! inputs (0/n, n/n, n = 1, empty arms) instead of NaN or a panic; reference values are in
//! `../shared/stats` and checked by `tests/stats.rs`.
//!
//! Rates and differences are fractions (0.22, not 22); reports convert to percentage points.
//!
//! # Which function answers which question
//!
//! | question | call |
//! |---|---|
//! | pass rate of one arm, with its interval | [`rate_estimate`] (Wilson), [`proportion_interval`] for other methods or one-sided bounds |
//! | "is the rate at most / at least X?" | [`proportion_interval`] with [`Sides::Upper`] / [`Sides::Lower`] |
//! | two arms on the same tasks | [`flips`] (per-task outcomes → [`PairedTable`] + flipped tasks), then [`mcnemar`] (mid-p) and [`paired_difference`] (Newcombe) |
//! | two arms on different tasks | [`unpaired_test`] (Fisher; Boschloo is more powerful) and [`unpaired_difference`] (Newcombe hybrid) |
//! | k trials per task | [`pass_k_summary`] (mean over tasks, SE clustered by task), [`bootstrap_over_tasks`] / [`bootstrap_mean`] (seeded) |
//! | what can this design detect? | [`min_detectable_difference`] and [`noise`] |
//! | several claims at once | [`adjust`] (Holm by default) |
//! | does the classifier agree with the human? | [`ConfusionMatrix`], [`cohen_kappa`] |
//! | failure-class shares per arm and their difference | [`class_rates`], [`compare_classes`] |
//! | the sentence for the report | [`verdict`] with the difference and [`DetectableDifference::smallest`] |
//!
//! A `coroner compare` on paired arms, in order: `flips` → `mcnemar(table, McNemarMethod::default())`
//! → `paired_difference(table, DEFAULT_CONFIDENCE, PairedDiffMethod::default())` →
//! `min_detectable_difference(Design::paired(table.n(), table.b().rate()))` → `verdict(...)`.

mod bootstrap;
mod classes;
mod dist;
mod kappa;
mod multitest;
mod paired;
mod passk;
mod power;
mod proportion;
mod types;
mod unconditional;
mod unpaired;
mod verdict;

pub use bootstrap::{BootstrapResult, DEFAULT_RESAMPLES, DEFAULT_SEED, bootstrap_mean, bootstrap_over_tasks};
pub use classes::{ClassComparison, ClassCounts, ClassRate, class_rate, class_rates, compare_classes};
pub use kappa::{Averages, ClassMetrics, ConfusionMatrix, Kappa, Prf, cohen_kappa};
pub use multitest::{Adjusted, Adjustment, adjust, adjust_p_values};
pub use paired::{Flips, McNemarMethod, PairedDiffMethod, PairedTable, flips, mcnemar, newcombe_phi, paired_difference};
pub use passk::{
    ClusteredSe, PassKSummary, PassMetric, TaskTrials, VarianceDecomposition, clustered_se, pass_at_k, pass_at_k_plugin, pass_hat_k,
    pass_hat_k_plugin, pass_k_per_task, pass_k_summary, variance_decomposition,
};
pub use power::{
    Design, DetectableDifference, MdeMethod, Noise, Pairing, Shift, TrialVariance, binomial_at_most, cohen_h_detectable,
    mde_paired_best_case_connor, mde_paired_best_case_exact, mde_paired_connor, mde_paired_exact, mde_paired_known_variance,
    mde_unpaired_arcsine, mde_unpaired_fisher, mde_unpaired_normal, miller_mde, miller_tasks_needed, min_detectable_difference, noise,
    power_paired_exact, power_unpaired_fisher, power_unpaired_normal,
};
pub use proportion::{ProportionMethod, Sides, proportion_interval, rate_estimate, wilson};
pub use types::{DEFAULT_CONFIDENCE, Estimate, Interval, Proportion, TestResult};
pub use unconditional::{barnard, boschloo};
pub use unpaired::{UnpairedDiffMethod, UnpairedTest, chi2_yates, fisher_exact, unpaired_difference, unpaired_test, z_test_pooled};
pub use verdict::{Verdict, VerdictKind, verdict};
