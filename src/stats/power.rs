//! What a design can detect, before anyone reads a result: the noise of a rate at n tasks, the
//! power of the tests coroner runs, and the minimum detectable difference (80% power at α = 0.05
//! unless told otherwise). At 34 tasks per arm no design detects less than about 22 pp.
//!
//! Conventions: `alpha` is two-sided; `power` is the target probability of rejecting. NaN or
//! out-of-range values are replaced by 0.05 and 0.8, or clamped into `(0, 1)`. `n = 0` has no
//! power: every minimum detectable difference is `None` and every power 0.

use serde::Serialize;

use super::dist::{LnFactorials, binomial_pmfs, bisect, fisher_two_sided_all, hypergeometric_pmfs, norm_cdf, norm_ppf};
use super::unconditional::Region;

/// 1σ of a pass rate at `n` tasks and true rate `p`: the size of a difference that is pure noise.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Noise {
    pub n: u64,
    pub p: f64,
    /// `sqrt(n p (1−p))`: 1σ of the number of tasks passed.
    pub sd_tasks: f64,
    /// `sqrt(p(1−p)/n)`: 1σ of the rate, as a fraction (× 100 for percentage points).
    pub se_rate: f64,
    /// `sqrt(2) · se_rate`: 1σ of the difference between two independent runs at that rate.
    pub se_difference: f64,
}

impl Noise {
    /// 1σ of the rate in percentage points.
    pub fn se_rate_pp(&self) -> f64 {
        100.0 * self.se_rate
    }
}

/// The noise figure at `n` tasks and rate `p` (clamped into `[0, 1]`); `n = 0` gives zeros.
/// At n = 34, p = 0.15: 2.08 tasks, 6.1 pp.
pub fn noise(n: u64, p: f64) -> Noise {
    let p = if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) };
    if n == 0 {
        return Noise { n, p, sd_tasks: 0.0, se_rate: 0.0, se_difference: 0.0 };
    }
    let nf = n as f64;
    let se = (p * (1.0 - p) / nf).sqrt();
    Noise { n, p, sd_tasks: (nf * p * (1.0 - p)).sqrt(), se_rate: se, se_difference: std::f64::consts::SQRT_2 * se }
}

/// Which way a difference from the baseline goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Shift {
    /// The other arm passes more often than the baseline.
    Up,
    /// The other arm passes less often.
    Down,
}

fn alpha_power(alpha: f64, power: f64) -> (f64, f64) {
    let a = if alpha.is_nan() { 0.05 } else { alpha.clamp(1e-12, 1.0 - 1e-12) };
    let p = if power.is_nan() { 0.8 } else { power.clamp(1e-12, 1.0 - 1e-12) };
    (a, p)
}

fn z_alpha_beta(alpha: f64, power: f64) -> (f64, f64) {
    let (a, p) = alpha_power(alpha, power);
    (-norm_ppf(a / 2.0), norm_ppf(p))
}

fn clamp_rate(p: f64) -> f64 {
    if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) }
}

// ---------------------------------------------------------------------------------------------
// Two independent arms of n tasks each.

/// Power of the two-sided pooled z test with `n` tasks per arm, rates `p0` and `p1` (both tails,
/// as statsmodels `power_proportions_2indep`).
pub fn power_unpaired_normal(p0: f64, p1: f64, n: u64, alpha: f64) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let (p0, p1) = (clamp_rate(p0), clamp_rate(p1));
    let (za, _) = z_alpha_beta(alpha, 0.8);
    let nf = n as f64;
    let pbar = (p0 + p1) / 2.0;
    let se0 = (2.0 * pbar * (1.0 - pbar) / nf).sqrt();
    let se1 = ((p0 * (1.0 - p0) + p1 * (1.0 - p1)) / nf).sqrt();
    let d = (p1 - p0).abs();
    if se1 == 0.0 {
        return if d > za * se0 { 1.0 } else { 0.0 };
    }
    (norm_cdf((d - za * se0) / se1) + norm_cdf((-d - za * se0) / se1)).min(1.0)
}

/// The smallest shift from `p0` that the pooled z test detects with the given power at `n` per
/// arm; `None` when no shift in that direction reaches it.
pub fn mde_unpaired_normal(p0: f64, n: u64, alpha: f64, power: f64, shift: Shift) -> Option<f64> {
    let p0 = clamp_rate(p0);
    let (_, target) = alpha_power(alpha, power);
    let f = |p1: f64| power_unpaired_normal(p0, p1, n, alpha) - target;
    match shift {
        Shift::Up => (p0 < 1.0 - 1e-9 && f(1.0 - 1e-12) >= 0.0).then(|| bisect(p0 + 1e-9, 1.0 - 1e-12, f) - p0),
        Shift::Down => (p0 > 1e-9 && f(1e-12) >= 0.0).then(|| p0 - bisect(1e-12, p0 - 1e-9, f)),
    }
}

/// Cohen's h detectable at `n` per arm: the h at which the two-sided normal test reaches the
/// power (both tails counted, as statsmodels `NormalIndPower.solve_power`).
pub fn cohen_h_detectable(n: u64, alpha: f64, power: f64) -> Option<f64> {
    if n == 0 {
        return None;
    }
    let (za, _) = z_alpha_beta(alpha, power);
    let (_, target) = alpha_power(alpha, power);
    let root_n = (n as f64 / 2.0).sqrt();
    let pw = |h: f64| norm_cdf(h * root_n - za) + norm_cdf(-za - h * root_n) - target;
    let mut hi = 1.0;
    while pw(hi) < 0.0 && hi < 1e6 {
        hi *= 2.0;
    }
    Some(bisect(0.0, hi, pw))
}

/// The detectable shift from `p0` on the arcsine scale: `sin²(asin(√p0) ± h/2)` with the h of
/// [`cohen_h_detectable`]; `None` when it leaves `[0, 1]`.
pub fn mde_unpaired_arcsine(p0: f64, n: u64, alpha: f64, power: f64, shift: Shift) -> Option<f64> {
    let p0 = clamp_rate(p0);
    let h = cohen_h_detectable(n, alpha, power)?;
    let phi0 = 2.0 * p0.sqrt().asin();
    match shift {
        Shift::Up => {
            let up = phi0 + h;
            (up <= std::f64::consts::PI).then(|| (up / 2.0).sin().powi(2) - p0)
        }
        Shift::Down => {
            let dn = phi0 - h;
            (dn >= 0.0).then(|| p0 - (dn / 2.0).sin().powi(2))
        }
    }
}

/// The rejection region of the two-sided Fisher test at level `alpha` with `n` tasks per arm.
fn fisher_region(n: u64, alpha: f64, lf: &LnFactorials) -> Region {
    let width = n as usize + 1;
    let mut reject = vec![false; width * width];
    for s in 0..=2 * n {
        let (lo, pmf) = hypergeometric_pmfs(n, n, s, lf);
        for (k, p) in fisher_two_sided_all(&pmf).into_iter().enumerate() {
            let i = lo + k as u64;
            reject[i as usize * width + (s - i) as usize] = p <= alpha;
        }
    }
    Region::new(n, n, |i, j| reject[i as usize * width + j as usize])
}

/// Exact power of the two-sided Fisher test (level `alpha`) with `n` tasks per arm and true rates
/// `p0`, `p1`, by enumerating every pair of outcomes.
pub fn power_unpaired_fisher(p0: f64, p1: f64, n: u64, alpha: f64) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let (a, _) = alpha_power(alpha, 0.8);
    let lf = LnFactorials::new(2 * n);
    let region = fisher_region(n, a, &lf);
    region.probability(&binomial_pmfs(n, clamp_rate(p1), &lf), &binomial_pmfs(n, clamp_rate(p0), &lf))
}

/// The smallest shift from `p0` that the two-sided Fisher test detects with exact power at `n` per
/// arm (first crossing on a grid of 200, then bisection); `None` when none does. A downward
/// shift from `p0` is the upward shift from `1 − p0` with passes and failures swapped.
pub fn mde_unpaired_fisher(p0: f64, n: u64, alpha: f64, power: f64, shift: Shift) -> Option<f64> {
    if n == 0 {
        return None;
    }
    let p0 = clamp_rate(p0);
    let base = if shift == Shift::Up { p0 } else { 1.0 - p0 };
    let (a, target) = alpha_power(alpha, power);
    let lf = LnFactorials::new(2 * n);
    let region = fisher_region(n, a, &lf);
    let b0 = binomial_pmfs(n, base, &lf);
    let pw = |p1: f64| region.probability(&binomial_pmfs(n, p1, &lf), &b0) - target;
    first_crossing(base, 1.0, 200, pw).map(|p1| p1 - base)
}

/// The first point on `[lo, hi]` where `f` becomes non-negative: a grid of `steps`, then bisection
/// between the last negative and the first non-negative grid point.
fn first_crossing(lo: f64, hi: f64, steps: usize, f: impl Fn(f64) -> f64) -> Option<f64> {
    let at = |i: usize| lo + (hi - lo) * i as f64 / steps as f64;
    let i = (1..=steps).find(|&i| f(at(i)) >= 0.0)?;
    let (mut a, mut b) = (at(i - 1), at(i));
    for _ in 0..80 {
        let mid = 0.5 * (a + b);
        if f(mid) >= 0.0 {
            b = mid;
        } else {
            a = mid;
        }
    }
    Some(b)
}

// ---------------------------------------------------------------------------------------------
// Two arms on the same n tasks. p10 = P(only A passes), p01 = P(only B passes),
// psi = p10 + p01 (discordance), delta = p10 − p01 (the difference in pass rate).

/// The (b, c) splits that the exact McNemar test rejects at `alpha`.
fn mcnemar_region(n: u64, alpha: f64) -> Vec<(u64, u64)> {
    let lf = LnFactorials::new(n);
    let mut out = Vec::new();
    for m in 1..=n {
        let mut cdf = 0.0;
        for low in 0..=m / 2 {
            cdf += (lf.ln_choose(m, low) - m as f64 * std::f64::consts::LN_2).exp();
            if (2.0 * cdf).min(1.0) <= alpha {
                out.push((low, m - low));
                if low != m - low {
                    out.push((m - low, low));
                }
            }
        }
    }
    out
}

fn xlny(x: u64, y: f64) -> Option<f64> {
    if x == 0 {
        Some(0.0)
    } else if y <= 0.0 {
        None
    } else {
        Some(x as f64 * y.ln())
    }
}

fn power_paired_on(region: &[(u64, u64)], n: u64, p10: f64, p01: f64, lf: &LnFactorials) -> f64 {
    let pc = (1.0 - p10 - p01).max(0.0);
    let mut total = 0.0;
    for &(b, c) in region {
        let rest = n - b - c;
        let (Some(lb), Some(lc), Some(lr)) = (xlny(b, p10), xlny(c, p01), xlny(rest, pc)) else { continue };
        // Multinomial coefficient n! / (b! c! rest!) as C(n, b) · C(n − b, c).
        total += (lf.ln_choose(n, b) + lf.ln_choose(n - b, c) + lb + lc + lr).exp();
    }
    total.clamp(0.0, 1.0)
}

/// Exact power of the exact McNemar test at `alpha` on `n` tasks, when a task passes only in A
/// with probability `p10` and only in B with `p01` (enumerating every split of the n tasks).
pub fn power_paired_exact(n: u64, p10: f64, p01: f64, alpha: f64) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let (a, _) = alpha_power(alpha, 0.8);
    let lf = LnFactorials::new(n);
    power_paired_on(&mcnemar_region(n, a), n, clamp_rate(p10), clamp_rate(p01), &lf)
}

/// The smallest `delta` (with discordance `psi` fixed) at which the exact McNemar test reaches the
/// power on `n` tasks: first crossing on a grid of 800, then bisection. `None` when even
/// `delta = psi` (all flips one way) falls short. Enumerates O(n²) splits per evaluation.
pub fn mde_paired_exact(n: u64, psi: f64, alpha: f64, power: f64) -> Option<f64> {
    if n == 0 {
        return None;
    }
    let psi = clamp_rate(psi);
    let (a, target) = alpha_power(alpha, power);
    let lf = LnFactorials::new(n);
    let region = mcnemar_region(n, a);
    first_crossing(0.0, psi, 800, |d| power_paired_on(&region, n, (psi + d) / 2.0, (psi - d) / 2.0, &lf) - target)
}

/// Connor (1987): the `delta` at which `n = [z_α/2 √psi + z_β √(psi − δ²)]² / δ²`, i.e. the normal
/// approximation to McNemar's power with discordance `psi`. `None` when infeasible at this n.
pub fn mde_paired_connor(n: u64, psi: f64, alpha: f64, power: f64) -> Option<f64> {
    if n == 0 {
        return None;
    }
    let psi = clamp_rate(psi);
    let (za, zb) = z_alpha_beta(alpha, power);
    let need = |d: f64| (za * psi.sqrt() + zb * (psi - d * d).max(0.0).sqrt()).powi(2) / (d * d) - n as f64;
    (psi > 1e-9 && need(psi - 1e-12) <= 0.0).then(|| bisect(1e-9, psi - 1e-12, need))
}

/// Miller (2024) eq. 9 for a paired difference with known variance `psi`:
/// `(z_α/2 + z_β) · sqrt(psi / n)`; `None` when that exceeds `psi` (infeasible).
pub fn mde_paired_known_variance(n: u64, psi: f64, alpha: f64, power: f64) -> Option<f64> {
    if n == 0 {
        return None;
    }
    let psi = clamp_rate(psi);
    let (za, zb) = z_alpha_beta(alpha, power);
    let d = (za + zb) * (psi / n as f64).sqrt();
    (d <= psi).then_some(d)
}

/// The best case for a paired design, by Connor's formula with `psi = delta`: every flip favours
/// the better arm. No paired design on `n` tasks detects less.
pub fn mde_paired_best_case_connor(n: u64, alpha: f64, power: f64) -> Option<f64> {
    if n == 0 {
        return None;
    }
    let (za, zb) = z_alpha_beta(alpha, power);
    let f = |d: f64| (za * d.sqrt() + zb * (d - d * d).max(0.0).sqrt()).powi(2) / (d * d) - n as f64;
    (f(1.0 - 1e-9) <= 0.0).then(|| bisect(1e-6, 1.0 - 1e-9, f))
}

/// The best case for a paired design with the exact McNemar test: with every flip favouring one
/// arm, the test rejects once `b ≥ b_min` (the least b with `2·½^b ≤ alpha`), so the detectable
/// delta solves `P(Binomial(n, delta) ≥ b_min) = power`. `None` when `n < b_min`.
pub fn mde_paired_best_case_exact(n: u64, alpha: f64, power: f64) -> Option<f64> {
    let (a, target) = alpha_power(alpha, power);
    let b_min = (1..=n).find(|&b| (2.0 * 0.5f64.powi(b.min(2000) as i32)).min(1.0) <= a)?;
    let lf = LnFactorials::new(n);
    let tail = |d: f64| binomial_pmfs(n, d, &lf)[b_min as usize..].iter().sum::<f64>() - target;
    Some(bisect(1e-9, 1.0 - 1e-9, tail))
}

// ---------------------------------------------------------------------------------------------
// k trials per task (Miller 2024).

/// The variance components of a k-trial comparison (Miller 2024): between-task variance and
/// each arm's within-task (trial) variance with its number of trials per task.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TrialVariance {
    /// Between-task variance ω² of the per-task difference.
    pub between: f64,
    /// Within-task variance σ²_A of arm A's trials, and its trials per task.
    pub within_a: f64,
    pub trials_a: u64,
    /// Within-task variance σ²_B of arm B's trials, and its trials per task.
    pub within_b: f64,
    pub trials_b: u64,
}

impl TrialVariance {
    /// `ω² + σ²_A/K_A + σ²_B/K_B` (zero trials count as one; negative totals as 0).
    fn total(&self) -> f64 {
        (self.between + self.within_a / self.trials_a.max(1) as f64 + self.within_b / self.trials_b.max(1) as f64).max(0.0)
    }
}

/// Miller (2024) eq. 9: tasks needed to detect `delta` with these variances. `delta = 0` needs
/// infinitely many; reported as `f64::MAX`.
pub fn miller_tasks_needed(delta: f64, v: TrialVariance, alpha: f64, power: f64) -> f64 {
    let (za, zb) = z_alpha_beta(alpha, power);
    if delta == 0.0 { f64::MAX } else { (za + zb).powi(2) * v.total() / (delta * delta) }
}

/// Miller (2024) eq. 9 inverted: the difference detectable on `n` tasks with these variances
/// (more trials per task shrink only the within-task part). `n = 0` gives `None`.
pub fn miller_mde(n: u64, v: TrialVariance, alpha: f64, power: f64) -> Option<f64> {
    if n == 0 {
        return None;
    }
    let (za, zb) = z_alpha_beta(alpha, power);
    Some((za + zb) * (v.total() / n as f64).sqrt())
}

/// `P(X ≤ t)` for X ~ Binomial(n, p): the chance an "at most t failures" prediction holds when
/// the true failure rate is p.
pub fn binomial_at_most(t: u64, n: u64, p: f64) -> f64 {
    super::dist::binomial_cdf(t, n, clamp_rate(p))
}

// ---------------------------------------------------------------------------------------------
// The headline number.

/// Whether the arms run on the same tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pairing {
    Paired,
    Unpaired,
}

/// A comparison design, as known before the results are in.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Design {
    pub pairing: Pairing,
    /// Tasks per arm (for a paired design, the number of tasks both arms ran).
    pub n: u64,
    /// The baseline pass rate.
    pub baseline: f64,
    /// Two-sided significance level.
    pub alpha: f64,
    /// Target power.
    pub power: f64,
    /// Paired designs only: the expected share of tasks that flip (`p10 + p01`). Unknown (`None`)
    /// means the best case, where every flip favours the better arm.
    pub discordance: Option<f64>,
}

impl Design {
    /// A paired design at α = 0.05 and 80% power, best case discordance.
    pub const fn paired(n: u64, baseline: f64) -> Self {
        Self { pairing: Pairing::Paired, n, baseline, alpha: 0.05, power: 0.8, discordance: None }
    }

    /// An unpaired design at α = 0.05 and 80% power.
    pub const fn unpaired(n: u64, baseline: f64) -> Self {
        Self { pairing: Pairing::Unpaired, n, baseline, alpha: 0.05, power: 0.8, discordance: None }
    }
}

/// How a minimum detectable difference was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MdeMethod {
    /// Exact McNemar, every flip favouring one arm ([`mde_paired_best_case_exact`]).
    McNemarExactBestCase,
    /// Exact McNemar at the given discordance ([`mde_paired_exact`]).
    McNemarExact,
    /// Connor's normal approximation at the given discordance ([`mde_paired_connor`]).
    Connor,
    /// Exact power of the two-sided Fisher test ([`mde_unpaired_fisher`]).
    FisherExact,
    /// Normal approximation of the pooled z test ([`mde_unpaired_normal`]).
    NormalPooledZ,
}

/// The minimum detectable difference of a design, in both directions from the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DetectableDifference {
    pub design: Design,
    pub method: MdeMethod,
    /// Smallest detectable improvement over the baseline (`None`: none is detectable).
    pub up: Option<f64>,
    /// Smallest detectable drop below the baseline.
    pub down: Option<f64>,
    /// The smaller of the two: "the smallest difference this design can detect".
    pub smallest: Option<f64>,
}

/// The minimum detectable difference of `design`.
///
/// Paired: the exact McNemar test, best case when the discordance is unknown (so the number is a
/// floor: real designs need more), or at the given discordance (exact up to 100 tasks, Connor's
/// approximation above). A shift that would take the better arm past 100% (or the worse below 0%)
/// is reported as `None`. Unpaired: the exact power of Fisher's test up to 300 tasks per arm, the
/// pooled z test's normal approximation above. `n = 0`: all `None`.
pub fn min_detectable_difference(design: Design) -> DetectableDifference {
    let d = design;
    let base = clamp_rate(d.baseline);
    let (method, up, down) = match d.pairing {
        Pairing::Paired => {
            let (method, delta) = match d.discordance {
                None => (MdeMethod::McNemarExactBestCase, mde_paired_best_case_exact(d.n, d.alpha, d.power)),
                Some(psi) if d.n <= 100 => (MdeMethod::McNemarExact, mde_paired_exact(d.n, psi, d.alpha, d.power)),
                Some(psi) => (MdeMethod::Connor, mde_paired_connor(d.n, psi, d.alpha, d.power)),
            };
            let delta = if d.n == 0 { None } else { delta };
            (method, delta.filter(|x| *x <= 1.0 - base), delta.filter(|x| *x <= base))
        }
        Pairing::Unpaired if d.n <= 300 => (
            MdeMethod::FisherExact,
            mde_unpaired_fisher(base, d.n, d.alpha, d.power, Shift::Up),
            mde_unpaired_fisher(base, d.n, d.alpha, d.power, Shift::Down),
        ),
        Pairing::Unpaired => (
            MdeMethod::NormalPooledZ,
            mde_unpaired_normal(base, d.n, d.alpha, d.power, Shift::Up),
            mde_unpaired_normal(base, d.n, d.alpha, d.power, Shift::Down),
        ),
    };
    let smallest = match (up, down) {
        (Some(u), Some(w)) => Some(u.min(w)),
        (u, w) => u.or(w),
    };
    DetectableDifference { design, method, up, down, smallest }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_tasks_no_power() {
        assert_eq!(noise(0, 0.3).sd_tasks, 0.0);
        assert_eq!(power_unpaired_normal(0.1, 0.9, 0, 0.05), 0.0);
        assert_eq!(power_unpaired_fisher(0.1, 0.9, 0, 0.05), 0.0);
        assert_eq!(power_paired_exact(0, 0.5, 0.0, 0.05), 0.0);
        for p in [Pairing::Paired, Pairing::Unpaired] {
            let d = min_detectable_difference(Design { pairing: p, ..Design::paired(0, 0.2) });
            assert_eq!((d.up, d.down, d.smallest), (None, None, None));
        }
        assert_eq!(mde_paired_connor(0, 0.3, 0.05, 0.8), None);
        let v = TrialVariance { between: 0.1, within_a: 0.1, trials_a: 1, within_b: 0.1, trials_b: 1 };
        assert_eq!(miller_mde(0, v, 0.05, 0.8), None);
    }

    #[test]
    fn tiny_designs_cannot_detect_anything() {
        // One task: McNemar can never reject at 5%; Fisher with one task per arm neither.
        assert_eq!(mde_paired_best_case_exact(1, 0.05, 0.8), None);
        let d = min_detectable_difference(Design::unpaired(1, 0.5));
        assert_eq!(d.smallest, None);
        assert_eq!(mde_unpaired_normal(1.0, 34, 0.05, 0.8, Shift::Up), None);
        assert_eq!(mde_unpaired_normal(0.0, 34, 0.05, 0.8, Shift::Down), None);
    }

    #[test]
    fn headline_numbers_at_34_tasks() {
        let paired = min_detectable_difference(Design::paired(34, 0.15));
        assert!((paired.smallest.unwrap() - 0.2226).abs() < 1e-3, "{paired:?}");
        assert_eq!(paired.down, None, "a 22 pp drop from 15% is impossible");
        let unpaired = min_detectable_difference(Design::unpaired(34, 0.15));
        assert!((unpaired.up.unwrap() - 0.3338).abs() < 1e-3, "{unpaired:?}");
        let n = noise(34, 0.15);
        assert!((n.sd_tasks - 2.08).abs() < 0.005 && (n.se_rate_pp() - 6.1).abs() < 0.05);
    }
}
