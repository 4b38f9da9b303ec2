//! Confidence intervals for one rate `k/n` (a pass rate, a failure-class share): Wilson by default
//! because it keeps its coverage at the small n and extreme rates benchmarks have; exact and
//! Bayesian alternatives on request; one-sided bounds for "at most / at least X" claims.

use serde::Serialize;

use super::dist::{beta_ppf, clamp_confidence, norm_ppf};
use super::types::{Estimate, Interval, Proportion};

/// How to compute a one-proportion interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum ProportionMethod {
    /// Wilson score interval (scipy `binomtest(...).proportion_ci(method='wilson')`). The default:
    /// close to nominal coverage at any n, never outside `[0, 1]`, never zero width.
    #[default]
    Wilson,
    /// Wilson with continuity correction (scipy `method='wilsoncc'`): more conservative.
    WilsonCc,
    /// Clopper–Pearson "exact" interval: guaranteed coverage, conservative.
    ClopperPearson,
    /// Jeffreys interval, equal-tailed Beta(k+½, n−k+½) quantiles with the Brown–Cai–DasGupta
    /// boundary rule (lower = 0 when k = 0, upper = 1 when k = n).
    Jeffreys,
    /// Jeffreys without the boundary rule (statsmodels `method='jeffreys'`); at k = 0 its lower
    /// end is slightly above 0, which excludes the observed rate.
    JeffreysEqualTailed,
    /// Agresti–Coull ("add z²/2 successes and failures"), clipped to `[0, 1]`.
    AgrestiCoull,
    /// Central interval of the Beta(k+1, n−k+1) posterior under a uniform prior.
    BayesUniform,
    /// Wald `p ± z·sqrt(p(1−p)/n)`, clipped. Zero width at 0/n and n/n: a negative control only.
    Wald,
}

/// Which ends of the interval are bounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Sides {
    #[default]
    TwoSided,
    /// Only an upper bound at level `confidence` (for "the rate is at most X"); `lo` is 0.
    Upper,
    /// Only a lower bound at level `confidence` (for "the rate is at least X"); `hi` is 1.
    Lower,
}

/// The confidence interval of the rate `p.k / p.n`.
///
/// A one-sided bound at level c uses the same construction as the two-sided interval at level
/// 2c − 1 (for Wilson this is scipy's `alternative='less'/'greater'`, for Clopper–Pearson the
/// usual `Beta(α; …)` bound).
///
/// Edge cases: `n = 0` gives `[0, 1]` (nothing is known). `k = 0` gives lower end 0 and `k = n`
/// upper end 1 for every method except [`ProportionMethod::JeffreysEqualTailed`] and
/// [`ProportionMethod::BayesUniform`], whose ends are quantiles strictly inside `(0, 1)`, and
/// [`ProportionMethod::Wald`], which collapses to a point. `n = 1` is an ordinary (wide) interval.
pub fn proportion_interval(p: Proportion, confidence: f64, sides: Sides, method: ProportionMethod) -> Interval {
    let (k, n) = p.counts();
    if n == 0 {
        return Interval::new(0.0, 1.0);
    }
    let c = clamp_confidence(confidence);
    match sides {
        Sides::TwoSided => two_sided(k, n, (1.0 - c) / 2.0, method),
        Sides::Upper => Interval::new(0.0, two_sided(k, n, 1.0 - c, method).hi),
        Sides::Lower => Interval::new(two_sided(k, n, 1.0 - c, method).lo, 1.0),
    }
}

/// The Wilson interval, the default for every rate coroner reports.
pub fn wilson(p: Proportion, confidence: f64) -> Interval {
    proportion_interval(p, confidence, Sides::TwoSided, ProportionMethod::Wilson)
}

/// The rate with its two-sided interval (estimate 0 and interval `[0, 1]` when `n = 0`).
pub fn rate_estimate(p: Proportion, confidence: f64, method: ProportionMethod) -> Estimate {
    let i = proportion_interval(p, confidence, Sides::TwoSided, method);
    Estimate { estimate: p.rate(), interval: i }
}

/// The interval whose tails each hold `tail` (α/2 for two-sided, α for a one-sided bound).
fn two_sided(k: u64, n: u64, tail: f64, method: ProportionMethod) -> Interval {
    let (kf, nf) = (k as f64, n as f64);
    let z = -norm_ppf(tail);
    let ends = match method {
        ProportionMethod::Wilson => wilson_ends(k, n, z, false),
        ProportionMethod::WilsonCc => wilson_ends(k, n, z, true),
        ProportionMethod::ClopperPearson => (
            if k == 0 { 0.0 } else { beta_ppf(kf, nf - kf + 1.0, tail) },
            if k == n { 1.0 } else { beta_ppf(kf + 1.0, nf - kf, 1.0 - tail) },
        ),
        ProportionMethod::Jeffreys => (
            if k == 0 { 0.0 } else { beta_ppf(kf + 0.5, nf - kf + 0.5, tail) },
            if k == n { 1.0 } else { beta_ppf(kf + 0.5, nf - kf + 0.5, 1.0 - tail) },
        ),
        ProportionMethod::JeffreysEqualTailed => (beta_ppf(kf + 0.5, nf - kf + 0.5, tail), beta_ppf(kf + 0.5, nf - kf + 0.5, 1.0 - tail)),
        ProportionMethod::BayesUniform => (beta_ppf(kf + 1.0, nf - kf + 1.0, tail), beta_ppf(kf + 1.0, nf - kf + 1.0, 1.0 - tail)),
        ProportionMethod::AgrestiCoull => {
            let n_c = nf + z * z;
            let q = (kf + z * z / 2.0) / n_c;
            let d = z * (q * (1.0 - q) / n_c).sqrt();
            (q - d, q + d)
        }
        ProportionMethod::Wald => {
            let p = kf / nf;
            let d = z * (p * (1.0 - p) / nf).sqrt();
            (p - d, p + d)
        }
    };
    Interval::new(ends.0, ends.1).clamp(0.0, 1.0)
}

/// Wilson's interval in Newcombe's (1998) closed form, with the exact ends at k = 0 and k = n.
fn wilson_ends(k: u64, n: u64, z: f64, correction: bool) -> (f64, f64) {
    let (kf, nf) = (k as f64, n as f64);
    let p = kf / nf;
    let q = 1.0 - p;
    let denom = 2.0 * (nf + z * z);
    let center = (2.0 * nf * p + z * z) / denom;
    if correction {
        let lo =
            if k == 0 { 0.0 } else { center - (1.0 + z * (z * z - 2.0 - 1.0 / nf + 4.0 * p * (nf * q + 1.0)).max(0.0).sqrt()) / denom };
        let hi =
            if k == n { 1.0 } else { center + (1.0 + z * (z * z + 2.0 - 1.0 / nf + 4.0 * p * (nf * q - 1.0)).max(0.0).sqrt()) / denom };
        (lo, hi)
    } else {
        let delta = z / denom * (4.0 * nf * p * q + z * z).sqrt();
        (if k == 0 { 0.0 } else { center - delta }, if k == n { 1.0 } else { center + delta })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [ProportionMethod; 8] = [
        ProportionMethod::Wilson,
        ProportionMethod::WilsonCc,
        ProportionMethod::ClopperPearson,
        ProportionMethod::Jeffreys,
        ProportionMethod::JeffreysEqualTailed,
        ProportionMethod::AgrestiCoull,
        ProportionMethod::BayesUniform,
        ProportionMethod::Wald,
    ];

    #[test]
    fn empty_sample_knows_nothing() {
        for m in ALL {
            for s in [Sides::TwoSided, Sides::Upper, Sides::Lower] {
                assert_eq!(proportion_interval(Proportion::new(0, 0), 0.95, s, m), Interval::new(0.0, 1.0));
            }
        }
        assert_eq!(rate_estimate(Proportion::new(3, 0), 0.95, ProportionMethod::Wilson).estimate, 0.0);
    }

    #[test]
    fn boundaries_and_single_trials_are_finite_and_ordered() {
        for m in ALL {
            for (k, n) in [(0, 1), (1, 1), (0, 34), (34, 34), (0, 500), (500, 500), (7, 3)] {
                for s in [Sides::TwoSided, Sides::Upper, Sides::Lower] {
                    for c in [0.95, 0.5, 0.0, 1.0, f64::NAN] {
                        let i = proportion_interval(Proportion::new(k, n), c, s, m);
                        assert!(i.lo.is_finite() && i.hi.is_finite(), "{m:?} {k}/{n} {s:?} {c}");
                        assert!(0.0 <= i.lo && i.lo <= i.hi && i.hi <= 1.0, "{m:?} {k}/{n} {s:?} {c}: {i:?}");
                    }
                }
            }
        }
        // Wilson keeps the observed rate inside, including at the boundaries.
        assert_eq!(wilson(Proportion::new(0, 34), 0.95).lo, 0.0);
        assert_eq!(wilson(Proportion::new(34, 34), 0.95).hi, 1.0);
        let one = wilson(Proportion::new(1, 1), 0.95);
        assert!(one.hi == 1.0 && one.lo > 0.2 && one.lo < 0.21);
    }
}
