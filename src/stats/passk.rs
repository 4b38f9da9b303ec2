//! k trials per task. The unbiased pass@k (Chen et al. 2021) and pass^k (Yao et al. 2024) are
//! estimated per task and averaged over tasks; the uncertainty comes from the tasks, so standard
//! errors are clustered by task. Treating the trials as independent makes the standard error about
//! 1.5× too small at 3 trials per task.

use std::collections::BTreeMap;

use serde::Serialize;

use super::dist::z_two_sided;
use super::types::{Estimate, Interval};

/// One task's trials: how many ran and how many passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TaskTrials {
    pub trials: u64,
    pub passed: u64,
}

impl TaskTrials {
    pub const fn new(trials: u64, passed: u64) -> Self {
        Self { trials, passed }
    }
}

/// Which k-trial metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PassMetric {
    /// pass@k: the chance that at least one of k trials passes ("can it ever solve it").
    #[default]
    PassAtK,
    /// pass^k: the chance that all k trials pass ("does it solve it reliably").
    PassHatK,
}

/// Unbiased pass@k of one task, `1 − C(n−c, k)/C(n, k)` with n trials and c passes, computed as
/// a product so large n do not overflow. `None` when `k > n` or `c > n` (not estimable); `k = 0`
/// gives 0.
pub fn pass_at_k(n: u64, c: u64, k: u64) -> Option<f64> {
    if k > n || c > n {
        return None;
    }
    if k == 0 {
        return Some(0.0);
    }
    if n - c < k {
        return Some(1.0);
    }
    let prod: f64 = (n - c + 1..=n).map(|i| 1.0 - k as f64 / i as f64).product();
    Some(1.0 - prod)
}

/// Unbiased pass^k of one task, `C(c, k)/C(n, k)`. `None` when `k > n` or `c > n`; `k = 0` gives 1.
pub fn pass_hat_k(n: u64, c: u64, k: u64) -> Option<f64> {
    if k > n || c > n {
        return None;
    }
    if c < k {
        return Some(0.0);
    }
    Some((0..k).map(|i| (c - i) as f64 / (n - i) as f64).product())
}

/// The biased plug-in pass@k, `1 − (1 − c/n)^k`, for comparison only (it overstates pass@k).
/// `None` when `n = 0` or `c > n`.
pub fn pass_at_k_plugin(n: u64, c: u64, k: u64) -> Option<f64> {
    (n > 0 && c <= n).then(|| 1.0 - (1.0 - c as f64 / n as f64).powi(k.min(i32::MAX as u64) as i32))
}

/// The biased plug-in pass^k, `(c/n)^k`, for comparison only. `None` when `n = 0` or `c > n`.
pub fn pass_hat_k_plugin(n: u64, c: u64, k: u64) -> Option<f64> {
    (n > 0 && c <= n).then(|| (c as f64 / n as f64).powi(k.min(i32::MAX as u64) as i32))
}

/// The per-task estimate of `metric` (see [`pass_at_k`], [`pass_hat_k`]).
pub fn pass_k_per_task(t: TaskTrials, k: u64, metric: PassMetric) -> Option<f64> {
    match metric {
        PassMetric::PassAtK => pass_at_k(t.trials, t.passed, k),
        PassMetric::PassHatK => pass_hat_k(t.trials, t.passed, k),
    }
}

/// A k-trial metric averaged over tasks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PassKSummary {
    pub metric: PassMetric,
    pub k: u64,
    /// Tasks that entered the mean.
    pub tasks: usize,
    /// Tasks left out because they had fewer than k trials.
    pub skipped: usize,
    /// Mean over tasks, with the normal interval `mean ± z·se` clipped to `[0, 1]`.
    pub estimate: Estimate,
    /// Standard error over tasks: `sd(per-task estimates, ddof=1) / sqrt(tasks)` (Miller 2024 eq. 1).
    pub se: f64,
    /// What a bootstrap over tasks converges to: `se · sqrt((tasks−1)/tasks)`.
    pub se_bootstrap_limit: f64,
}

/// Averages the per-task unbiased estimator over tasks, with the standard error clustered by task.
///
/// Tasks with fewer than `k` trials cannot be estimated and are counted in `skipped`. With no
/// usable task the mean is 0, the standard errors 0 and the interval `[0, 1]`; with one task the
/// standard errors are 0 (no spread to measure) and the interval is the point.
pub fn pass_k_summary(tasks: &[TaskTrials], k: u64, metric: PassMetric, confidence: f64) -> PassKSummary {
    let values: Vec<f64> = tasks.iter().filter_map(|&t| pass_k_per_task(t, k, metric)).collect();
    let skipped = tasks.len() - values.len();
    let t = values.len();
    if t == 0 {
        return PassKSummary { metric, k, tasks: 0, skipped, estimate: Estimate::new(0.0, 0.0, 1.0), se: 0.0, se_bootstrap_limit: 0.0 };
    }
    let (mean, var) = mean_var(&values);
    let tf = t as f64;
    let se = (var / tf).sqrt();
    let z = z_two_sided(confidence);
    PassKSummary {
        metric,
        k,
        tasks: t,
        skipped,
        estimate: Estimate { estimate: mean, interval: Interval::new(mean - z * se, mean + z * se).clamp(0.0, 1.0) },
        se,
        se_bootstrap_limit: se * ((tf - 1.0) / tf).sqrt(),
    }
}

/// Mean and sample variance (ddof = 1; 0 for fewer than two values).
pub(crate) fn mean_var(values: &[f64]) -> (f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0);
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = if values.len() < 2 { 0.0 } else { values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0) };
    (mean, var)
}

/// Standard errors of a mean of observations that come in clusters (trials within a task, tasks
/// within a repository), from the naive to the cluster-robust.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ClusteredSe {
    pub mean: f64,
    pub observations: usize,
    pub clusters: usize,
    /// `sqrt(m(1−m)/n)`: right only for independent 0/1 outcomes.
    pub naive_binomial: f64,
    /// `sqrt(Σ(x−m)²/(n−1)/n)` (Miller 2024 eq. 1): ignores the clusters.
    pub clt: f64,
    /// Miller (2024) clustered SE: `sqrt(clt² + Σ_c Σ_{i≠j} e_i e_j / n²)`.
    pub miller: f64,
    /// Sandwich CR0: `sqrt(Σ_c (Σ_i e_ic)²) / n`.
    pub cr0: f64,
    /// CR0 with the small-sample factor `sqrt(G/(G−1))` (statsmodels' default). The one to report.
    pub cr1: f64,
}

/// Standard errors of the mean of `values`, where `clusters[i]` names the cluster of `values[i]`.
///
/// Only the first `min(values.len(), clusters.len())` observations are used. No observations give
/// all zeros; one observation gives zero standard errors; a single cluster has no between-cluster
/// spread to measure, so CR1 (undefined there) is reported equal to CR0. A negative Miller
/// variance (possible with negatively correlated clusters) is reported as 0.
pub fn clustered_se<C: Ord>(values: &[f64], clusters: &[C]) -> ClusteredSe {
    let n = values.len().min(clusters.len());
    let values = &values[..n];
    let (mean, var) = mean_var(values);
    let mut groups: BTreeMap<&C, (f64, f64)> = BTreeMap::new();
    for (v, c) in values.iter().zip(clusters) {
        let e = v - mean;
        let g = groups.entry(c).or_insert((0.0, 0.0));
        g.0 += e;
        g.1 += e * e;
    }
    let nf = n as f64;
    let g = groups.len();
    if n == 0 {
        return ClusteredSe { mean: 0.0, observations: 0, clusters: 0, naive_binomial: 0.0, clt: 0.0, miller: 0.0, cr0: 0.0, cr1: 0.0 };
    }
    let clt = (var / nf).sqrt();
    let cross: f64 = groups.values().map(|(s, s2)| s * s - s2).sum();
    let totals_sq: f64 = groups.values().map(|(s, _)| s * s).sum();
    let cr0 = totals_sq.sqrt() / nf;
    ClusteredSe {
        mean,
        observations: n,
        clusters: g,
        naive_binomial: (mean * (1.0 - mean) / nf).max(0.0).sqrt(),
        clt,
        miller: (clt * clt + cross / (nf * nf)).max(0.0).sqrt(),
        cr0,
        cr1: if g > 1 { cr0 * (g as f64 / (g as f64 - 1.0)).sqrt() } else { cr0 },
    }
}

/// How much of the spread in per-task pass rates is trial noise and how much is real difference
/// between tasks (Miller 2024): more trials per task shrink the first, never the second.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct VarianceDecomposition {
    /// Mean over tasks of `c(K−c)/(K(K−1))`: the unbiased within-task (trial) variance σ².
    pub within: f64,
    /// Sample variance (ddof = 1) of the per-task rates `c/K`.
    pub task_means: f64,
    /// Between-task variance: `task_means − mean(σ²_i / K_i)`; may be negative in small samples.
    pub between: f64,
    /// Tasks used (those with at least two trials).
    pub tasks: usize,
}

/// Splits the variance of per-task pass rates into trial noise and task differences. Only tasks
/// with at least two trials can show trial noise; the others are left out. No usable task gives
/// all zeros.
pub fn variance_decomposition(tasks: &[TaskTrials]) -> VarianceDecomposition {
    let usable: Vec<(f64, f64)> =
        tasks.iter().filter(|t| t.trials >= 2).map(|t| (t.trials as f64, t.passed.min(t.trials) as f64)).collect();
    if usable.is_empty() {
        return VarianceDecomposition { within: 0.0, task_means: 0.0, between: 0.0, tasks: 0 };
    }
    let tf = usable.len() as f64;
    let sig: Vec<f64> = usable.iter().map(|(k, c)| c * (k - c) / (k * (k - 1.0))).collect();
    let within = sig.iter().sum::<f64>() / tf;
    let rates: Vec<f64> = usable.iter().map(|(k, c)| c / k).collect();
    let (_, task_means) = mean_var(&rates);
    let noise = usable.iter().zip(&sig).map(|((k, _), s)| s / k).sum::<f64>() / tf;
    VarianceDecomposition { within, task_means, between: task_means - noise, tasks: usable.len() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimators_handle_impossible_and_trivial_k() {
        assert_eq!(pass_at_k(3, 1, 4), None);
        assert_eq!(pass_hat_k(3, 4, 1), None);
        assert_eq!(pass_at_k(3, 1, 0), Some(0.0));
        assert_eq!(pass_hat_k(3, 1, 0), Some(1.0));
        assert_eq!(pass_at_k(0, 0, 0), Some(0.0));
        assert_eq!(pass_at_k_plugin(0, 0, 1), None);
        assert_eq!(pass_at_k(1, 1, 1), Some(1.0));
        assert_eq!(pass_hat_k(1, 0, 1), Some(0.0));
    }

    #[test]
    fn summaries_of_nothing_and_of_one_task_are_finite() {
        let s = pass_k_summary(&[], 1, PassMetric::PassAtK, 0.95);
        assert_eq!((s.tasks, s.skipped, s.se, s.estimate), (0, 0, 0.0, Estimate::new(0.0, 0.0, 1.0)));
        let s = pass_k_summary(&[TaskTrials::new(1, 1), TaskTrials::new(3, 2)], 2, PassMetric::PassHatK, 0.95);
        assert_eq!((s.tasks, s.skipped, s.se), (1, 1, 0.0));
        assert!((s.estimate.estimate - 1.0 / 3.0).abs() < 1e-15);
        assert_eq!(s.estimate.interval.width(), 0.0);
        let c = clustered_se::<u32>(&[], &[]);
        assert_eq!(c.cr1, 0.0);
        let c = clustered_se(&[1.0, 0.0, 1.0], &[7, 7, 7]);
        assert_eq!(c.clusters, 1);
        assert_eq!(c.cr1, c.cr0);
        assert_eq!(variance_decomposition(&[TaskTrials::new(1, 1)]).tasks, 0);
    }
}
