//! The small value types every statistic returns, so reports can print and serialize them the
//! same way whatever method produced them.

use serde::Serialize;

/// The confidence level used when a caller has no reason to choose another.
pub const DEFAULT_CONFIDENCE: f64 = 0.95;

/// A confidence interval `[lo, hi]` (for rates: fractions in `[0, 1]`; for differences: in
/// `[-1, 1]`; both ends are always finite).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
}

impl Interval {
    pub const fn new(lo: f64, hi: f64) -> Self {
        Self { lo, hi }
    }

    pub fn contains(&self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }

    pub fn width(&self) -> f64 {
        self.hi - self.lo
    }

    /// Half the width: the "±" a report prints next to a rate.
    pub fn half_width(&self) -> f64 {
        self.width() / 2.0
    }

    pub(crate) fn clamp(self, lo: f64, hi: f64) -> Self {
        Self { lo: self.lo.clamp(lo, hi), hi: self.hi.clamp(lo, hi) }
    }
}

/// `k` successes out of `n` trials (or tasks).
///
/// Functions that take a `Proportion` treat `k > n` as `k = n`, so a miscount never panics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Proportion {
    pub k: u64,
    pub n: u64,
}

impl Proportion {
    pub const fn new(k: u64, n: u64) -> Self {
        Self { k, n }
    }

    /// `k / n`, or 0 when `n = 0` (there is no rate to report, and 0 keeps arithmetic finite).
    pub fn rate(&self) -> f64 {
        let (k, n) = self.counts();
        if n == 0 { 0.0 } else { k as f64 / n as f64 }
    }

    /// `(k, n)` with `k` capped at `n`.
    pub(crate) fn counts(&self) -> (u64, u64) {
        (self.k.min(self.n), self.n)
    }
}

/// A hypothesis test's statistic and p-value. What `statistic` means depends on the test and is
/// stated in each test's documentation; the p-value is always in `[0, 1]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TestResult {
    pub statistic: f64,
    pub p_value: f64,
}

/// A point estimate with its confidence interval (a rate, or a difference between two rates).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    pub estimate: f64,
    pub interval: Interval,
}

impl Estimate {
    pub const fn new(estimate: f64, lo: f64, hi: f64) -> Self {
        Self { estimate, interval: Interval::new(lo, hi) }
    }
}
