//! Two arms run on different tasks (or different samples of a task pool): each arm is its own
//! binomial sample. Tests: Fisher's exact test (conditional), Boschloo's and Barnard's
//! unconditional exact tests (see `unconditional`), and the large-sample z and χ² tests.
//! Intervals for the difference A − B: Newcombe's hybrid score interval by default.

use serde::Serialize;

use super::dist::{LnFactorials, bisect, chi2_1_sf, clamp_confidence, fisher_two_sided_all, hypergeometric_pmfs, two_sided_p, z_two_sided};
use super::proportion::wilson;
use super::types::{Estimate, Proportion, TestResult};
use super::unconditional::{barnard, boschloo};

/// Which test of "both arms have the same pass rate".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum UnpairedTest {
    /// Fisher's exact test, two-sided. The default: exact, fast, the test every reader knows;
    /// conservative at small n.
    #[default]
    Fisher,
    /// Boschloo's test: Fisher's p-value used as the statistic of an unconditional exact test.
    /// Uniformly more powerful than Fisher at the same guaranteed size.
    Boschloo,
    /// Barnard's test with the pooled z statistic (unconditional exact).
    Barnard,
    /// Pooled two-proportion z test, no continuity correction.
    ZPooled,
    /// Pearson's χ² with Yates' continuity correction.
    ChiSquaredYates,
}

/// Runs the chosen test on arm A (`a.k` passes of `a.n`) against arm B. See each test's function
/// for what `statistic` is and what an empty arm gives.
pub fn unpaired_test(a: Proportion, b: Proportion, test: UnpairedTest) -> TestResult {
    match test {
        UnpairedTest::Fisher => fisher_exact(a, b),
        UnpairedTest::Boschloo => boschloo(a, b),
        UnpairedTest::Barnard => barnard(a, b),
        UnpairedTest::ZPooled => z_test_pooled(a, b),
        UnpairedTest::ChiSquaredYates => chi2_yates(a, b),
    }
}

/// Fisher's exact test, two-sided: the probability, given both margins, of a table no more likely
/// than the observed one (ties within a relative 1e-7 count, as in R).
///
/// `statistic` is the sample odds ratio `(x1·(n2−x2)) / ((n1−x1)·x2)`; when a cell in its
/// denominator is 0 it is the Haldane–Anscombe odds ratio (½ added to every cell) so that it stays
/// finite. An empty arm gives statistic 1 and p-value 1.
pub fn fisher_exact(a: Proportion, b: Proportion) -> TestResult {
    let ((x1, n1), (x2, n2)) = (a.counts(), b.counts());
    if n1 == 0 || n2 == 0 {
        return TestResult { statistic: 1.0, p_value: 1.0 };
    }
    let (ca, cb, cc, cd) = (x1 as f64, (n1 - x1) as f64, x2 as f64, (n2 - x2) as f64);
    let odds = if cb * cc > 0.0 { ca * cd / (cb * cc) } else { (ca + 0.5) * (cd + 0.5) / ((cb + 0.5) * (cc + 0.5)) };
    let lf = LnFactorials::new(n1 + n2);
    let (lo, pmf) = hypergeometric_pmfs(n1, n2, x1 + x2, &lf);
    let p = fisher_two_sided_all(&pmf)[(x1 - lo) as usize];
    TestResult { statistic: odds, p_value: p }
}

/// The pooled two-proportion z test (statsmodels `proportions_ztest`): `statistic` is z for A − B.
/// When both arms are all-pass or all-fail, or an arm is empty, z is 0 and the p-value 1.
pub fn z_test_pooled(a: Proportion, b: Proportion) -> TestResult {
    let ((x1, n1), (x2, n2)) = (a.counts(), b.counts());
    if n1 == 0 || n2 == 0 {
        return TestResult { statistic: 0.0, p_value: 1.0 };
    }
    let p = (x1 + x2) as f64 / (n1 + n2) as f64;
    if p <= 0.0 || p >= 1.0 {
        return TestResult { statistic: 0.0, p_value: 1.0 };
    }
    let z = (a.rate() - b.rate()) / (p * (1.0 - p) * (1.0 / n1 as f64 + 1.0 / n2 as f64)).sqrt();
    TestResult { statistic: z, p_value: two_sided_p(z) }
}

/// Pearson's χ² test with Yates' correction (scipy `chi2_contingency(correction=True)`).
/// When an expected count is 0 (an empty arm, or no passes or no failures at all) the statistic is
/// 0 and the p-value 1.
pub fn chi2_yates(a: Proportion, b: Proportion) -> TestResult {
    let ((x1, n1), (x2, n2)) = (a.counts(), b.counts());
    let obs = [[x1 as f64, (n1 - x1) as f64], [x2 as f64, (n2 - x2) as f64]];
    let rows = [n1 as f64, n2 as f64];
    let cols = [(x1 + x2) as f64, (n1 + n2 - x1 - x2) as f64];
    let total = rows[0] + rows[1];
    if rows.contains(&0.0) || cols.contains(&0.0) {
        return TestResult { statistic: 0.0, p_value: 1.0 };
    }
    let mut stat = 0.0;
    for i in 0..2 {
        for j in 0..2 {
            let e = rows[i] * cols[j] / total;
            let diff = (obs[i][j] - e).abs();
            let corrected = diff - diff.min(0.5);
            stat += corrected * corrected / e;
        }
    }
    TestResult { statistic: stat, p_value: chi2_1_sf(stat) }
}

/// How to compute the interval of the difference A − B between independent arms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum UnpairedDiffMethod {
    /// Newcombe (1998) hybrid score interval: Wilson intervals of both rates combined by
    /// square-and-add (statsmodels `method='newcomb'`). The default: closed form, good coverage.
    #[default]
    NewcombeHybrid,
    /// Miettinen–Nurminen asymptotic score interval (with the N/(N−1) variance factor).
    MiettinenNurminen,
    /// Mee's score interval (Miettinen–Nurminen without the N/(N−1) factor).
    Mee,
    /// Agresti–Caffo: one success and one failure added to each arm, then Wald; clipped.
    AgrestiCaffo,
    /// Plain Wald, not clipped. A negative control.
    Wald,
}

/// The difference in pass rate A − B between independent arms, with its interval.
///
/// Edge cases: an empty arm (`n = 0`) gives estimate 0 and `[-1, 1]`. Arms at 0/n or n/n keep
/// finite, non-degenerate intervals (except Wald, which collapses when both are at a boundary).
pub fn unpaired_difference(a: Proportion, b: Proportion, confidence: f64, method: UnpairedDiffMethod) -> Estimate {
    let ((x1, n1), (x2, n2)) = (a.counts(), b.counts());
    if n1 == 0 || n2 == 0 {
        return Estimate::new(0.0, -1.0, 1.0);
    }
    let z = z_two_sided(clamp_confidence(confidence));
    let (p1, p2) = (a.rate(), b.rate());
    let est = p1 - p2;
    match method {
        UnpairedDiffMethod::NewcombeHybrid => {
            let (w1, w2) = (wilson(a, confidence), wilson(b, confidence));
            let d_lo = ((p1 - w1.lo).powi(2) + (w2.hi - p2).powi(2)).sqrt();
            let d_hi = ((p2 - w2.lo).powi(2) + (w1.hi - p1).powi(2)).sqrt();
            Estimate::new(est, (est - d_lo).max(-1.0), (est + d_hi).min(1.0))
        }
        UnpairedDiffMethod::MiettinenNurminen => score_interval((x1, n1), (x2, n2), z, true),
        UnpairedDiffMethod::Mee => score_interval((x1, n1), (x2, n2), z, false),
        UnpairedDiffMethod::AgrestiCaffo => {
            let (m1, m2) = ((n1 + 2) as f64, (n2 + 2) as f64);
            let (q1, q2) = ((x1 + 1) as f64 / m1, (x2 + 1) as f64 / m2);
            let d = q1 - q2;
            let se = (q1 * (1.0 - q1) / m1 + q2 * (1.0 - q2) / m2).sqrt();
            Estimate::new(est, (d - z * se).max(-1.0), (d + z * se).min(1.0))
        }
        UnpairedDiffMethod::Wald => {
            let se = (p1 * (1.0 - p1) / n1 as f64 + p2 * (1.0 - p2) / n2 as f64).sqrt();
            Estimate::new(est, est - z * se, est + z * se)
        }
    }
}

/// The maximum-likelihood rates `(p1, p2)` under the constraint `p1 − p2 = delta`
/// (Farrington–Manning / Miettinen–Nurminen closed-form cubic root).
fn restricted_mle(x1: f64, n1: f64, x2: f64, n2: f64, delta: f64) -> (f64, f64) {
    let (p1h, p2h) = (x1 / n1, x2 / n2);
    let th = n2 / n1;
    let a = 1.0 + th;
    let b = -(1.0 + th + p1h + th * p2h + delta * (th + 2.0));
    let c = delta * delta + delta * (2.0 * p1h + th + 1.0) + p1h + th * p2h;
    let d = -p1h * delta * (1.0 + delta);
    let v = b.powi(3) / (27.0 * a.powi(3)) - b * c / (6.0 * a * a) + d / (2.0 * a);
    let s = b * b / (9.0 * a * a) - c / (3.0 * a);
    let root = s.max(0.0).sqrt();
    let u = if v != 0.0 { root.copysign(v) } else { root };
    let p1t = if u == 0.0 {
        -b / (3.0 * a)
    } else {
        let w = (std::f64::consts::PI + (v / u.powi(3)).clamp(-1.0, 1.0).acos()) / 3.0;
        2.0 * u * w.cos() - b / (3.0 * a)
    };
    let p1t = p1t.clamp(0.0, 1.0);
    (p1t, (p1t - delta).clamp(0.0, 1.0))
}

/// The Miettinen–Nurminen (or, without the correction, Mee) score statistic at `delta`.
/// Infinite (never NaN) where the restricted variance vanishes.
fn score_z(x1: f64, n1: f64, x2: f64, n2: f64, delta: f64, correction: bool) -> f64 {
    let num = x1 / n1 - x2 / n2 - delta;
    if num == 0.0 {
        return 0.0;
    }
    let (p1t, p2t) = restricted_mle(x1, n1, x2, n2, delta);
    let mut var = p1t * (1.0 - p1t) / n1 + p2t * (1.0 - p2t) / n2;
    if correction {
        let big_n = n1 + n2;
        var *= big_n / (big_n - 1.0);
    }
    if var <= 0.0 { num.signum() * f64::INFINITY } else { num / var.sqrt() }
}

fn score_interval((x1, n1): (u64, u64), (x2, n2): (u64, u64), z: f64, correction: bool) -> Estimate {
    let (x1, n1, x2, n2) = (x1 as f64, n1 as f64, x2 as f64, n2 as f64);
    let est = x1 / n1 - x2 / n2;
    let eps = 1e-12;
    let f = |d: f64| score_z(x1, n1, x2, n2, d, correction);
    let lo = if f(-1.0 + eps) - z < 0.0 { -1.0 } else { bisect(-1.0 + eps, est, |d| f(d) - z) };
    let hi = if f(1.0 - eps) + z > 0.0 { 1.0 } else { bisect(est, 1.0 - eps, |d| f(d) + z) };
    Estimate::new(est, lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TESTS: [UnpairedTest; 5] =
        [UnpairedTest::Fisher, UnpairedTest::Boschloo, UnpairedTest::Barnard, UnpairedTest::ZPooled, UnpairedTest::ChiSquaredYates];
    const METHODS: [UnpairedDiffMethod; 5] = [
        UnpairedDiffMethod::NewcombeHybrid,
        UnpairedDiffMethod::MiettinenNurminen,
        UnpairedDiffMethod::Mee,
        UnpairedDiffMethod::AgrestiCaffo,
        UnpairedDiffMethod::Wald,
    ];

    #[test]
    fn empty_arms_give_no_evidence() {
        for (a, b) in [
            (Proportion::new(0, 0), Proportion::new(5, 34)),
            (Proportion::new(5, 34), Proportion::new(0, 0)),
            (Proportion::new(0, 0), Proportion::new(0, 0)),
        ] {
            for t in TESTS {
                let r = unpaired_test(a, b, t);
                assert_eq!(r.p_value, 1.0, "{t:?}");
                assert!(r.statistic.is_finite());
            }
            for m in METHODS {
                assert_eq!(unpaired_difference(a, b, 0.95, m), Estimate::new(0.0, -1.0, 1.0));
            }
        }
    }

    #[test]
    fn boundary_rates_and_single_trials_are_finite() {
        let cases = [(0, 34, 0, 34), (34, 34, 34, 34), (34, 34, 0, 34), (0, 1, 1, 1), (1, 1, 1, 1), (0, 1, 0, 1), (0, 16, 15, 72)];
        for (x1, n1, x2, n2) in cases {
            let (a, b) = (Proportion::new(x1, n1), Proportion::new(x2, n2));
            for t in TESTS {
                let r = unpaired_test(a, b, t);
                assert!(r.statistic.is_finite() && (0.0..=1.0).contains(&r.p_value), "{t:?} {x1}/{n1} {x2}/{n2}: {r:?}");
            }
            for m in METHODS {
                let e = unpaired_difference(a, b, 0.95, m);
                assert!(e.interval.lo.is_finite() && e.interval.hi.is_finite() && e.interval.lo <= e.interval.hi, "{m:?}");
                assert!(e.interval.contains(e.estimate) || m == UnpairedDiffMethod::AgrestiCaffo, "{m:?} {x1}/{n1} {x2}/{n2}: {e:?}");
            }
        }
        // Identical all-pass arms: no difference, p = 1.
        assert_eq!(fisher_exact(Proportion::new(34, 34), Proportion::new(34, 34)).p_value, 1.0);
        // All-pass against all-fail: the odds ratio stays finite (Haldane) and the difference is certain.
        let r = fisher_exact(Proportion::new(34, 34), Proportion::new(0, 34));
        assert!(r.statistic.is_finite() && r.statistic > 1000.0 && r.p_value < 1e-15);
    }
}
