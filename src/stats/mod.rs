//! Statistics that separate a real difference from noise: intervals for one rate, paired and
//! unpaired comparisons of two arms, k-trial metrics with task-clustered errors, power and the
//! minimum detectable difference, multiple-comparison adjustment, rater agreement, failure-class
//! rates and a plain-language verdict. Every function returns finite, documented values on edge
//! inputs (0/n, n/n, n = 1, empty arms) instead of NaN or a panic; reference values are in
//! `../shared/stats` and checked by `tests/stats.rs`.
//!
//! Rates and differences are fractions (0.22, not 22); reports convert to percentage points.

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
    pass_hat_k_plugin, pass_k_summary, per_task, variance_decomposition,
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
