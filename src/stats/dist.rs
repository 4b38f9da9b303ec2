//! Distribution helpers shared by the tests and intervals: normal quantiles and tails, beta
//! quantiles and log-factorials from `statrs`, binomial and hypergeometric probabilities built on
//! them, and the two numeric searches (a root by bisection, a maximum on `[0, 1]`).

use std::f64::consts::{FRAC_PI_2, SQRT_2};

use statrs::distribution::{ContinuousCDF, Normal};
use statrs::function::{beta, erf, factorial};

use super::types::DEFAULT_CONFIDENCE;

/// A confidence level made safe to use: NaN means the default, and the level is kept inside
/// `[0, 1 - 1e-12]` so quantiles stay finite.
pub(crate) fn clamp_confidence(confidence: f64) -> f64 {
    if confidence.is_nan() { DEFAULT_CONFIDENCE } else { confidence.clamp(0.0, 1.0 - 1e-12) }
}

/// The standard normal quantile; `p` is clamped into `[1e-300, 1 - 1e-16]` so the result is finite.
pub(crate) fn norm_ppf(p: f64) -> f64 {
    let p = if p.is_nan() { 0.5 } else { p.clamp(1e-300, 1.0 - 1e-16) };
    Normal::standard().inverse_cdf(p)
}

/// The critical value of a two-sided interval at `confidence` (1.959963984540054 at 0.95).
pub(crate) fn z_two_sided(confidence: f64) -> f64 {
    let c = clamp_confidence(confidence);
    -norm_ppf((1.0 - c) / 2.0)
}

pub(crate) fn norm_cdf(x: f64) -> f64 {
    0.5 * erf::erfc(-x / SQRT_2)
}

/// `P(Z > x)`, accurate far into the tail (p-values of 1e-10 keep their digits).
pub(crate) fn norm_sf(x: f64) -> f64 {
    0.5 * erf::erfc(x / SQRT_2)
}

/// Two-sided normal p-value of a z statistic.
pub(crate) fn two_sided_p(z: f64) -> f64 {
    (2.0 * norm_sf(z.abs())).min(1.0)
}

/// Upper tail of the chi-squared distribution with one degree of freedom.
pub(crate) fn chi2_1_sf(x: f64) -> f64 {
    if x <= 0.0 { 1.0 } else { erf::erfc((x / 2.0).sqrt()) }
}

/// The `q` quantile of Beta(a, b).
pub(crate) fn beta_ppf(a: f64, b: f64, q: f64) -> f64 {
    beta::inv_beta_reg(a, b, q.clamp(0.0, 1.0))
}

/// `ln k!` for `k = 0..=n`, so the many binomial coefficients of an exact test cost a lookup.
pub(crate) struct LnFactorials(Vec<f64>);

impl LnFactorials {
    pub(crate) fn new(n: u64) -> Self {
        Self((0..=n).map(factorial::ln_factorial).collect())
    }

    pub(crate) fn ln_choose(&self, n: u64, k: u64) -> f64 {
        if k > n {
            return f64::NEG_INFINITY;
        }
        self.0[n as usize] - self.0[k as usize] - self.0[(n - k) as usize]
    }
}

/// `P(X = x)` for `x = 0..=n`, X ~ Binomial(n, p). One `exp` at the mode, then the ratio
/// recurrence outwards (exact tests evaluate this hundreds of times per p-value); far tails
/// underflow to 0 instead of going through `exp` of a huge negative number.
pub(crate) fn binomial_pmfs(n: u64, p: f64, lf: &LnFactorials) -> Vec<f64> {
    let p = p.clamp(0.0, 1.0);
    let len = n as usize + 1;
    let mut v = vec![0.0; len];
    if p == 0.0 || p == 1.0 {
        v[if p == 0.0 { 0 } else { n as usize }] = 1.0;
        return v;
    }
    let mode = (((n + 1) as f64 * p).floor() as u64).min(n);
    let (lp, lq) = (p.ln(), (-p).ln_1p());
    v[mode as usize] = (lf.ln_choose(n, mode) + mode as f64 * lp + (n - mode) as f64 * lq).exp();
    let odds = p / (1.0 - p);
    for x in mode..n {
        v[x as usize + 1] = v[x as usize] * ((n - x) as f64 / (x + 1) as f64) * odds;
    }
    for x in (1..=mode).rev() {
        v[x as usize - 1] = v[x as usize] * (x as f64 / (n - x + 1) as f64) / odds;
    }
    v
}

/// `P(X <= k)`, X ~ Binomial(n, p), by direct summation (exact enough for the n a benchmark has).
pub(crate) fn binomial_cdf(k: u64, n: u64, p: f64) -> f64 {
    if k >= n {
        return 1.0;
    }
    let lf = LnFactorials::new(n);
    let pmf = binomial_pmfs(n, p, &lf);
    pmf[..=k as usize].iter().sum::<f64>().min(1.0)
}

/// The hypergeometric probabilities of the first cell of a 2×2 table with row totals `n1`, `n2`
/// and first-column total `s`: `P(X = x)` for `x` in `lo..=hi`, returned as `(lo, probabilities)`.
/// Like [`binomial_pmfs`], one `exp` at the mode and the ratio recurrence outwards.
pub(crate) fn hypergeometric_pmfs(n1: u64, n2: u64, s: u64, lf: &LnFactorials) -> (u64, Vec<f64>) {
    let lo = s.saturating_sub(n2);
    let hi = s.min(n1);
    let mode = (((s + 1) as f64 * (n1 + 1) as f64 / (n1 + n2 + 2) as f64).floor() as u64).clamp(lo, hi);
    let mut v = vec![0.0; (hi - lo) as usize + 1];
    let at = |x: u64| (x - lo) as usize;
    v[at(mode)] = (lf.ln_choose(n1, mode) + lf.ln_choose(n2, s - mode) - lf.ln_choose(n1 + n2, s)).exp();
    // P(x+1)/P(x) = (n1−x)(s−x) / ((x+1)(n2−s+x+1))
    for x in mode..hi {
        v[at(x + 1)] = v[at(x)] * ((n1 - x) as f64 * (s - x) as f64) / ((x + 1) as f64 * (n2 + x + 1 - s) as f64);
    }
    for x in (lo + 1..=mode).rev() {
        v[at(x - 1)] = v[at(x)] * (x as f64 * (n2 + x - s) as f64) / ((n1 - x + 1) as f64 * (s - x + 1) as f64);
    }
    (lo, v)
}

/// Two-sided conditional p-values for every first cell of a hypergeometric support: the sum of the
/// probabilities of outcomes no more likely than the observed one. Probabilities within a relative
/// 1e-7 of each other count as ties (as R's `fisher.test` does), so rounding never splits a tie.
pub(crate) fn fisher_two_sided_all(pmf: &[f64]) -> Vec<f64> {
    let mut sorted: Vec<f64> = pmf.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut prefix = Vec::with_capacity(sorted.len() + 1);
    prefix.push(0.0);
    let mut acc = 0.0;
    for v in &sorted {
        acc += v;
        prefix.push(acc);
    }
    pmf.iter()
        .map(|&p| {
            let cut = p * (1.0 + 1e-7);
            let count = sorted.partition_point(|&v| v <= cut);
            prefix[count].min(1.0)
        })
        .collect()
}

/// A root of `f` on `[lo, hi]`, where `f(lo)` and `f(hi)` have opposite signs, by bisection down to
/// adjacent floating-point numbers (as tight as `brentq` with xtol 1e-13, and never divergent).
pub(crate) fn bisect(mut lo: f64, mut hi: f64, f: impl Fn(f64) -> f64) -> f64 {
    let lo_negative = f(lo) < 0.0;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        let fm = f(mid);
        if fm == 0.0 {
            return mid;
        }
        if (fm < 0.0) == lo_negative {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The maximum of `f` over `[0, 1]`: a grid even in arcsine scale (so it is dense near 0 and 1,
/// where the binomial probabilities behind an exact test change fastest), then a golden-section
/// refinement around every grid-point local maximum within 10% of the best grid value (a lower
/// peak cannot overtake it: between grid points the function moves by far less).
pub(crate) fn maximize_unit(f: impl Fn(f64) -> f64) -> f64 {
    const GRID: usize = 256;
    let xs: Vec<f64> = (0..=GRID).map(|i| (FRAC_PI_2 * i as f64 / GRID as f64).sin().powi(2)).collect();
    let vs: Vec<f64> = xs.iter().map(|&x| f(x)).collect();
    let mut best = vs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    for i in 0..=GRID {
        let left = if i == 0 { f64::NEG_INFINITY } else { vs[i - 1] };
        let right = if i == GRID { f64::NEG_INFINITY } else { vs[i + 1] };
        if vs[i] >= left && vs[i] >= right && vs[i] > 0.0 && vs[i] >= 0.9 * best {
            let a = xs[i.saturating_sub(1)];
            let b = xs[(i + 1).min(GRID)];
            best = best.max(golden_max(&f, a, b));
        }
    }
    best
}

fn golden_max(f: &impl Fn(f64) -> f64, mut a: f64, mut b: f64) -> f64 {
    let g = (5f64.sqrt() - 1.0) / 2.0;
    let mut c = b - g * (b - a);
    let mut d = a + g * (b - a);
    let (mut fc, mut fd) = (f(c), f(d));
    let mut best = fc.max(fd);
    while b - a > 1e-11 {
        if fc >= fd {
            b = d;
            d = c;
            fd = fc;
            c = b - g * (b - a);
            fc = f(c);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + g * (b - a);
            fd = f(d);
        }
        best = best.max(fc).max(fd);
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn critical_values_match_the_tables() {
        assert!((z_two_sided(0.95) - 1.959963984540054).abs() < 1e-15);
        assert!(z_two_sided(f64::NAN).is_finite() && z_two_sided(1.0).is_finite() && z_two_sided(-3.0) == 0.0);
    }

    #[test]
    fn fisher_ties_are_counted_on_both_sides() {
        // A symmetric support: the observed middle cell ties with nothing, the tails tie pairwise.
        let p = fisher_two_sided_all(&[0.1, 0.2, 0.4, 0.2, 0.1]);
        assert!((p[0] - 0.2).abs() < 1e-15 && (p[1] - 0.6).abs() < 1e-15 && (p[2] - 1.0).abs() < 1e-15);
    }

    #[test]
    fn recurrences_match_direct_logs() {
        let lf = LnFactorials::new(400);
        for (n, p) in [(1, 0.5), (34, 0.15), (200, 0.999), (200, 1e-4), (400, 0.37)] {
            let v = binomial_pmfs(n, p, &lf);
            for (x, &got) in v.iter().enumerate() {
                let x = x as u64;
                let want = (lf.ln_choose(n, x) + x as f64 * p.ln() + (n - x) as f64 * (1.0 - p).ln()).exp();
                assert!((got - want).abs() <= 1e-12 * want, "binomial {n} {p} {x}: {got} vs {want}");
            }
            assert!((v.iter().sum::<f64>() - 1.0).abs() < 1e-13);
        }
        for (n1, n2, s) in [(34, 34, 15), (16, 72, 15), (4, 4, 4), (200, 200, 7), (200, 150, 340), (1, 1, 0)] {
            let (lo, v) = hypergeometric_pmfs(n1, n2, s, &lf);
            for (k, &got) in v.iter().enumerate() {
                let x = lo + k as u64;
                let want = (lf.ln_choose(n1, x) + lf.ln_choose(n2, s - x) - lf.ln_choose(n1 + n2, s)).exp();
                assert!((got - want).abs() <= 1e-12 * want, "hypergeometric {n1} {n2} {s} {x}: {got} vs {want}");
            }
        }
    }

    #[test]
    fn maximize_finds_an_interior_peak() {
        let m = maximize_unit(|x| x * (1.0 - x));
        assert!((m - 0.25).abs() < 1e-15);
    }
}
