//! The bootstrap over tasks: resample whole tasks (never trials within a task, which would
//! pretend the trials are independent), with a seeded ChaCha8 generator so one seed gives the
//! same numbers on every machine and every run.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::dist::clamp_confidence;
use super::passk::mean_var;
use super::types::{Estimate, Interval};

/// The seed coroner uses unless told otherwise.
pub const DEFAULT_SEED: u64 = 0x00C0_503E;
/// Enough resamples for percentile ends stable to about a tenth of a percentage point.
pub const DEFAULT_RESAMPLES: usize = 10_000;

/// A bootstrap estimate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BootstrapResult {
    /// The statistic on the original sample, with the percentile interval of the resamples.
    pub estimate: Estimate,
    /// Standard deviation (ddof = 1) of the resampled statistics.
    pub se: f64,
    pub resamples: usize,
    pub seed: u64,
}

/// Bootstraps `statistic` over `n_tasks` tasks: each resample draws `n_tasks` task indices with
/// replacement and passes them to `statistic`, which computes the statistic from those tasks (a
/// mean of per-task pass@k, a mean of per-task differences between two arms on the same tasks, …).
///
/// Indices are drawn as `u32` so the stream does not depend on the platform's pointer width.
/// Edge cases: `n_tasks = 0` or `resamples = 0` gives the statistic on the sample as it is (for an
/// empty sample, `statistic(&[])`), standard error 0 and a point interval. Non-finite statistic
/// values are left out of the interval and the standard error.
pub fn bootstrap_over_tasks(
    n_tasks: usize,
    resamples: usize,
    seed: u64,
    confidence: f64,
    mut statistic: impl FnMut(&[usize]) -> f64,
) -> BootstrapResult {
    let all: Vec<usize> = (0..n_tasks).collect();
    let point = statistic(&all);
    let degenerate = BootstrapResult { estimate: Estimate::new(point, point, point), se: 0.0, resamples: 0, seed };
    if n_tasks == 0 || resamples == 0 || n_tasks > u32::MAX as usize {
        return degenerate;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut idx = vec![0usize; n_tasks];
    let mut stats = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        for slot in idx.iter_mut() {
            *slot = rng.random_range(0..n_tasks as u32) as usize;
        }
        let s = statistic(&idx);
        if s.is_finite() {
            stats.push(s);
        }
    }
    if stats.is_empty() {
        return degenerate;
    }
    stats.sort_by(f64::total_cmp);
    let c = clamp_confidence(confidence);
    let (_, var) = mean_var(&stats);
    BootstrapResult {
        estimate: Estimate {
            estimate: point,
            interval: Interval::new(quantile(&stats, (1.0 - c) / 2.0), quantile(&stats, (1.0 + c) / 2.0)),
        },
        se: var.sqrt(),
        resamples,
        seed,
    }
}

/// Bootstraps the mean of per-task values (for a paired comparison, pass per-task differences).
/// An empty slice gives mean 0 with a point interval.
pub fn bootstrap_mean(values: &[f64], resamples: usize, seed: u64, confidence: f64) -> BootstrapResult {
    bootstrap_over_tasks(values.len(), resamples, seed, confidence, |idx| {
        if idx.is_empty() { 0.0 } else { idx.iter().map(|&i| values[i]).sum::<f64>() / idx.len() as f64 }
    })
}

/// The `q` quantile of sorted values with linear interpolation (numpy's default).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let i = pos.floor() as usize;
    let frac = pos - i as f64;
    if i + 1 < sorted.len() { sorted[i] + frac * (sorted[i + 1] - sorted[i]) } else { sorted[i] }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_zero_resamples_are_points() {
        let r = bootstrap_mean(&[], 100, 1, 0.95);
        assert_eq!((r.estimate, r.se), (Estimate::new(0.0, 0.0, 0.0), 0.0));
        let r = bootstrap_mean(&[0.5, 1.0], 0, 1, 0.95);
        assert_eq!(r.estimate, Estimate::new(0.75, 0.75, 0.75));
        let r = bootstrap_mean(&[1.0], 50, 1, 0.95);
        assert_eq!((r.estimate, r.se), (Estimate::new(1.0, 1.0, 1.0), 0.0));
    }

    #[test]
    fn quantile_interpolates() {
        assert_eq!(quantile(&[0.0, 1.0, 2.0, 3.0], 0.5), 1.5);
        assert_eq!(quantile(&[4.0], 0.9), 4.0);
    }
}
