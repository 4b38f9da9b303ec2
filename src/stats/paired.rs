//! Two arms run on the same tasks. Only the tasks that flipped (passed in one arm, failed in the
//! other) carry information about the difference, so the tests condition on them (McNemar) and the
//! intervals account for the pairing (Newcombe's method 10, Tango's score interval).

use std::collections::BTreeMap;

use serde::Serialize;

use super::dist::{LnFactorials, bisect, chi2_1_sf, clamp_confidence, z_two_sided};
use super::proportion::wilson;
use super::types::{Estimate, Proportion, TestResult};

/// The 2×2 table of paired outcomes. Arm A's pass rate is `(both_pass + only_a) / n`, arm B's is
/// `(both_pass + only_b) / n`; differences are reported as A − B.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct PairedTable {
    /// Tasks both arms passed (cell a).
    pub both_pass: u64,
    /// Tasks only arm A passed (cell b, discordant).
    pub only_a: u64,
    /// Tasks only arm B passed (cell c, discordant).
    pub only_b: u64,
    /// Tasks both arms failed (cell d).
    pub both_fail: u64,
}

impl PairedTable {
    /// From the cells in the usual a, b, c, d order.
    pub const fn new(both_pass: u64, only_a: u64, only_b: u64, both_fail: u64) -> Self {
        Self { both_pass, only_a, only_b, both_fail }
    }

    /// Counts the cells from per-task `(a_passed, b_passed)` outcomes.
    pub fn from_outcomes(outcomes: impl IntoIterator<Item = (bool, bool)>) -> Self {
        let mut t = Self::default();
        for o in outcomes {
            match o {
                (true, true) => t.both_pass += 1,
                (true, false) => t.only_a += 1,
                (false, true) => t.only_b += 1,
                (false, false) => t.both_fail += 1,
            }
        }
        t
    }

    /// Number of tasks.
    pub fn n(&self) -> u64 {
        self.both_pass + self.only_a + self.only_b + self.both_fail
    }

    /// Number of tasks that flipped either way.
    pub fn discordant(&self) -> u64 {
        self.only_a + self.only_b
    }

    pub fn a(&self) -> Proportion {
        Proportion::new(self.both_pass + self.only_a, self.n())
    }

    pub fn b(&self) -> Proportion {
        Proportion::new(self.both_pass + self.only_b, self.n())
    }
}

/// Which McNemar test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum McNemarMethod {
    /// Mid-p exact test (Fagerland, Lydersen & Laake 2013): the exact p-value minus half the
    /// probability of the observed split. The default: close to nominal size without the exact
    /// test's conservatism at the handful of discordant tasks a benchmark has.
    #[default]
    MidP,
    /// Exact conditional test: `2·P(Binomial(b+c, ½) ≤ min(b, c))`, capped at 1.
    Exact,
    /// `(b−c)²/(b+c)` against χ²(1).
    Asymptotic,
    /// `(|b−c|−1)²/(b+c)` against χ²(1).
    AsymptoticCc,
}

/// McNemar's test of "both arms pass the same share of tasks".
///
/// `statistic` is `min(b, c)` for the exact and mid-p tests and the χ² value for the asymptotic
/// ones. With no discordant tasks (including `n = 0`) there is no evidence of a difference: the
/// p-value is 1 and the statistic 0.
pub fn mcnemar(t: PairedTable, method: McNemarMethod) -> TestResult {
    let (b, c) = (t.only_a, t.only_b);
    let m = b + c;
    if m == 0 {
        return TestResult { statistic: 0.0, p_value: 1.0 };
    }
    match method {
        McNemarMethod::Exact | McNemarMethod::MidP => {
            let lf = LnFactorials::new(m);
            let pmf = |x: u64| (lf.ln_choose(m, x) - m as f64 * std::f64::consts::LN_2).exp();
            let low = b.min(c);
            let cdf: f64 = (0..=low).map(pmf).sum();
            let exact = (2.0 * cdf).min(1.0);
            let p = match method {
                McNemarMethod::Exact => exact,
                _ if b == c => 1.0 - 0.5 * pmf(b),
                _ => exact - pmf(b),
            };
            TestResult { statistic: low as f64, p_value: p.clamp(0.0, 1.0) }
        }
        McNemarMethod::Asymptotic | McNemarMethod::AsymptoticCc => {
            let d = b.abs_diff(c) as f64;
            let num = if method == McNemarMethod::AsymptoticCc { (d - 1.0).max(0.0).powi(2) } else { d * d };
            let stat = num / m as f64;
            TestResult { statistic: stat, p_value: chi2_1_sf(stat) }
        }
    }
}

/// How to compute the interval of the paired difference A − B.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum PairedDiffMethod {
    /// Newcombe (1998) method 10: Wilson intervals of both marginal rates combined by
    /// square-and-add with the corrected correlation φ. The default: good coverage at small n,
    /// closed form, never outside `[-1, 1]`.
    #[default]
    Newcombe,
    /// Tango (1998) asymptotic score interval (root of the score statistic).
    Tango,
    /// Agresti & Min (2005) "Wald + 2": half a task added to every cell; estimate `(b−c)/(n+2)`.
    AgrestiMin,
    /// Plain Wald; not clipped. A negative control: too narrow at small n.
    Wald,
}

/// The difference in pass rate A − B on the same tasks, `(b − c)/n`, with its interval.
///
/// Edge cases: `n = 0` gives estimate 0 and `[-1, 1]`. No discordant tasks gives estimate 0 and an
/// interval around 0 that still has width (except Wald, which collapses to `[0, 0]`). All tasks
/// flipped one way gives estimate ±1 with the matching end at ±1.
pub fn paired_difference(t: PairedTable, confidence: f64, method: PairedDiffMethod) -> Estimate {
    let n = t.n();
    if n == 0 {
        return Estimate::new(0.0, -1.0, 1.0);
    }
    let z = z_two_sided(clamp_confidence(confidence));
    let (b, c, nf) = (t.only_a as f64, t.only_b as f64, n as f64);
    match method {
        PairedDiffMethod::Newcombe => newcombe(t, confidence),
        PairedDiffMethod::Tango => tango(t, z),
        PairedDiffMethod::AgrestiMin => {
            let est = (b - c) / (nf + 2.0);
            let se = ((b + c + 1.0) - (b - c).powi(2) / (nf + 2.0)).max(0.0).sqrt() / (nf + 2.0);
            Estimate::new(est, (est - z * se).max(-1.0), (est + z * se).min(1.0))
        }
        PairedDiffMethod::Wald => {
            let est = (b - c) / nf;
            let se = ((b + c) - (b - c).powi(2) / nf).max(0.0).sqrt() / nf;
            Estimate::new(est, est - z * se, est + z * se)
        }
    }
}

/// Newcombe's corrected φ between the two arms' outcomes (0 when a margin is empty): the
/// correlation that method 10 uses to narrow the interval when the arms agree on most tasks.
pub fn newcombe_phi(t: PairedTable) -> f64 {
    let (a, b, c, d) = (t.both_pass as f64, t.only_a as f64, t.only_b as f64, t.both_fail as f64);
    let n = a + b + c + d;
    let (r1, r2, c1, c2) = (a + b, c + d, a + c, b + d);
    if r1.min(r2).min(c1).min(c2) == 0.0 {
        return 0.0;
    }
    let big_a = a * d - b * c;
    let den = (r1 * r2 * c1 * c2).sqrt();
    if big_a > n / 2.0 {
        (big_a - n / 2.0) / den
    } else if big_a >= 0.0 {
        0.0
    } else {
        big_a / den
    }
}

fn newcombe(t: PairedTable, confidence: f64) -> Estimate {
    let (pa, pb) = (t.a(), t.b());
    let (p1, p2) = (pa.rate(), pb.rate());
    let (w1, w2) = (wilson(pa, confidence), wilson(pb, confidence));
    let phi = newcombe_phi(t);
    let est = p1 - p2;
    let (d1, e2) = (p1 - w1.lo, w2.hi - p2);
    let (d2, e1) = (p2 - w2.lo, w1.hi - p1);
    let lo = est - (d1 * d1 + e2 * e2 - 2.0 * phi * d1 * e2).max(0.0).sqrt();
    let hi = est + (d2 * d2 + e1 * e1 - 2.0 * phi * d2 * e1).max(0.0).sqrt();
    Estimate::new(est, lo.max(-1.0), hi.min(1.0))
}

/// Tango's score statistic at difference `delta`, with its closed-form constrained MLE of the
/// B-only cell. Infinite (never NaN) where the variance vanishes, so bisection still brackets.
fn tango_stat(delta: f64, b: f64, c: f64, n: f64) -> f64 {
    let big_a = 2.0 * n;
    let big_b = -b - c + (2.0 * n - b + c) * delta;
    let big_c = -c * delta * (1.0 - delta);
    let p21 = ((big_b * big_b - 4.0 * big_a * big_c).max(0.0).sqrt() - big_b) / (2.0 * big_a);
    let num = b - c - n * delta;
    let var = n * (2.0 * p21 + delta * (1.0 - delta));
    if var <= 0.0 {
        return if num == 0.0 { 0.0 } else { num.signum() * f64::INFINITY };
    }
    num / var.sqrt()
}

fn tango(t: PairedTable, z: f64) -> Estimate {
    let (b, c, n) = (t.only_a as f64, t.only_b as f64, t.n() as f64);
    let est = (b - c) / n;
    let edge = 1.0 - 1e-9;
    let lo = if est <= -1.0 || tango_stat(-edge, b, c, n) - z < 0.0 { -1.0 } else { bisect(-edge, est, |x| tango_stat(x, b, c, n) - z) };
    let hi = if est >= 1.0 || tango_stat(edge, b, c, n) + z > 0.0 { 1.0 } else { bisect(est, edge, |x| tango_stat(x, b, c, n) + z) };
    Estimate::new(est, lo, hi)
}

/// The tasks that changed outcome between two arms, for the "which tasks flipped" listing next
/// to a paired comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flips<K> {
    /// Tasks that passed in A and failed in B.
    pub only_a_passed: Vec<K>,
    /// Tasks that passed in B and failed in A.
    pub only_b_passed: Vec<K>,
    /// The paired table over the tasks present in both arms.
    pub table: PairedTable,
    /// Tasks present only in A (not paired, not counted in `table`).
    pub missing_in_b: Vec<K>,
    /// Tasks present only in B (not paired, not counted in `table`).
    pub missing_in_a: Vec<K>,
}

/// Pairs per-task outcomes (`true` = passed) of two arms by task key and lists the flips, in key
/// order. Tasks present in only one arm are reported separately and left out of the table, since
/// a paired test needs both outcomes. Empty inputs give an empty table (which every paired
/// function accepts).
pub fn flips<K: Ord + Clone>(a: &BTreeMap<K, bool>, b: &BTreeMap<K, bool>) -> Flips<K> {
    let mut f = Flips {
        only_a_passed: Vec::new(),
        only_b_passed: Vec::new(),
        table: PairedTable::default(),
        missing_in_b: Vec::new(),
        missing_in_a: b.keys().filter(|k| !a.contains_key(*k)).cloned().collect(),
    };
    for (key, &pa) in a {
        let Some(&pb) = b.get(key) else {
            f.missing_in_b.push(key.clone());
            continue;
        };
        match (pa, pb) {
            (true, true) => f.table.both_pass += 1,
            (true, false) => {
                f.table.only_a += 1;
                f.only_a_passed.push(key.clone());
            }
            (false, true) => {
                f.table.only_b += 1;
                f.only_b_passed.push(key.clone());
            }
            (false, false) => f.table.both_fail += 1,
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    const METHODS: [PairedDiffMethod; 4] =
        [PairedDiffMethod::Newcombe, PairedDiffMethod::Tango, PairedDiffMethod::AgrestiMin, PairedDiffMethod::Wald];
    const TESTS: [McNemarMethod; 4] = [McNemarMethod::MidP, McNemarMethod::Exact, McNemarMethod::Asymptotic, McNemarMethod::AsymptoticCc];

    #[test]
    fn empty_table_is_no_evidence() {
        let t = PairedTable::default();
        for m in TESTS {
            assert_eq!(mcnemar(t, m), TestResult { statistic: 0.0, p_value: 1.0 });
        }
        for m in METHODS {
            assert_eq!(paired_difference(t, 0.95, m), Estimate::new(0.0, -1.0, 1.0));
        }
        assert_eq!(newcombe_phi(t), 0.0);
    }

    #[test]
    fn no_discordant_pairs_give_p_one_and_an_interval_around_zero() {
        for t in
            [PairedTable::new(10, 0, 0, 24), PairedTable::new(34, 0, 0, 0), PairedTable::new(0, 0, 0, 34), PairedTable::new(1, 0, 0, 0)]
        {
            for m in TESTS {
                assert_eq!(mcnemar(t, m).p_value, 1.0);
            }
            for m in METHODS {
                let e = paired_difference(t, 0.95, m);
                assert_eq!(e.estimate, 0.0);
                assert!(e.interval.lo.is_finite() && e.interval.hi.is_finite());
                assert!(e.interval.lo <= 0.0 && e.interval.hi >= 0.0, "{m:?} {t:?}: {e:?}");
            }
        }
    }

    #[test]
    fn single_task_and_one_way_flips_stay_in_range() {
        for t in [PairedTable::new(0, 1, 0, 0), PairedTable::new(0, 0, 1, 0), PairedTable::new(0, 34, 0, 0), PairedTable::new(0, 0, 34, 0)]
        {
            for m in TESTS {
                let r = mcnemar(t, m);
                assert!((0.0..=1.0).contains(&r.p_value) && r.statistic.is_finite());
            }
            for m in METHODS {
                let e = paired_difference(t, 0.95, m);
                assert!(e.interval.lo.is_finite() && e.interval.hi.is_finite() && e.interval.lo <= e.interval.hi, "{m:?} {t:?}");
                assert!(e.interval.lo >= -1.0 - 1e-12 && e.interval.hi <= 1.0 + 1e-12, "{m:?} {t:?}: {e:?}");
            }
        }
    }

    #[test]
    fn flips_list_each_direction_and_unpaired_tasks() {
        let a: BTreeMap<&str, bool> = [("t1", true), ("t2", true), ("t3", false), ("t4", false), ("t5", true)].into();
        let b: BTreeMap<&str, bool> = [("t1", true), ("t2", false), ("t3", true), ("t4", false), ("t6", true)].into();
        let f = flips(&a, &b);
        assert_eq!(f.only_a_passed, vec!["t2"]);
        assert_eq!(f.only_b_passed, vec!["t3"]);
        assert_eq!(f.table, PairedTable::new(1, 1, 1, 1));
        assert_eq!(f.missing_in_b, vec!["t5"]);
        assert_eq!(f.missing_in_a, vec!["t6"]);
        let empty = flips::<String>(&BTreeMap::new(), &BTreeMap::new());
        assert_eq!(empty.table.n(), 0);
        assert_eq!(PairedTable::from_outcomes([(true, true), (true, false), (false, false)]), PairedTable::new(1, 1, 0, 1));
    }
}
