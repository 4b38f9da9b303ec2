//! What a design can detect, per prediction, before the run: how far the truth must be from
//! the claimed value for the claim to be confirmed (or refuted) with 80% power at this n, so a
//! prediction that this many tasks can never settle is visible when it is sealed.
//!
//! One rate: the one-sided score test at level α (the test the Wilson bound inverts), normal
//! approximation. A difference: [`crate::stats::min_detectable_difference`] at two-sided level
//! 2α (the same one-sided level): exact McNemar in the best case for paired arms, Fisher's exact
//! test at a 50% baseline (the least favourable) for unpaired ones. A band claim (`==`, `≈`)
//! needs its tolerance to exceed the half-width the interval will have.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal};

use super::load::resolve_arm;
use super::model::{Comparator, Metric, Prediction, Quantity};
use crate::stats::{self, Design, Pairing};

/// The power coroner plans for.
pub const POWER: f64 = 0.8;

/// What one prediction's design can detect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Detectable {
    pub id: String,
    /// Tasks per arm the design has (absent when unknown or irrelevant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<u64>,
    /// The smallest distance from the claimed value the design detects with 80% power (for a
    /// band claim: the interval's expected half-width), as a fraction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detectable: Option<f64>,
    /// The claim can never be confirmed, or never refuted, at this n.
    pub underpowered: bool,
    pub note: String,
}

/// The tasks each arm has, as far as they are known before the run.
#[derive(Debug, Clone, Default)]
pub struct DesignInfo {
    /// Task ids per arm name, from ingesting the study's transcripts.
    pub tasks: BTreeMap<String, BTreeSet<String>>,
    /// `--n`: tasks per arm, overriding what ingest found.
    pub n: Option<u64>,
}

impl DesignInfo {
    fn arm_n(&self, arm: &str) -> Option<u64> {
        if self.n.is_some() {
            return self.n;
        }
        let names: Vec<String> = self.tasks.keys().cloned().collect();
        resolve_arm(&names, arm).and_then(|a| self.tasks.get(a)).map(|t| t.len() as u64)
    }

    /// Tasks compared and whether the two arms share their tasks (the `compare` rule: at least
    /// half of the larger arm's tasks in common). With `--n` only, pairing is unknown and
    /// assumed (the floor every design shares).
    fn pair(&self, a: &str, b: &str) -> Option<(u64, Pairing)> {
        if let Some(n) = self.n {
            return Some((n, Pairing::Paired));
        }
        let names: Vec<String> = self.tasks.keys().cloned().collect();
        let ta = self.tasks.get(resolve_arm(&names, a)?)?;
        let tb = self.tasks.get(resolve_arm(&names, b)?)?;
        let shared = ta.intersection(tb).count();
        if shared > 0 && shared * 2 >= ta.len().max(tb.len()) {
            Some((shared as u64, Pairing::Paired))
        } else {
            Some((ta.len().min(tb.len()) as u64, Pairing::Unpaired))
        }
    }
}

fn normal() -> Normal {
    Normal::standard()
}

/// The one-sided score test at level `alpha` on `n` trials rejects "rate = v" for "rate > v"
/// with probability `power` when the true rate is `v + d`; the smallest such `d`, or `None`
/// when even a rate of 1 falls short.
#[must_use]
pub fn one_rate_detectable(n: u64, v: f64, alpha: f64, power: f64) -> Option<f64> {
    if n == 0 {
        return None;
    }
    let v = v.clamp(0.0, 1.0);
    let nf = n as f64;
    let z_a = normal().inverse_cdf(1.0 - alpha);
    let sd0 = (v * (1.0 - v) / nf).sqrt();
    let power_at = |p1: f64| {
        let sd1 = (p1 * (1.0 - p1) / nf).sqrt();
        let gap = p1 - v - z_a * sd0;
        if sd1 == 0.0 { if gap > 0.0 { 1.0 } else { 0.0 } } else { normal().cdf(gap / sd1) }
    };
    let top = 1.0 - 1e-9;
    if v >= top || power_at(top) < power {
        return None;
    }
    let (mut lo, mut hi) = (v, top);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if power_at(mid) >= power {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi - v)
}

/// Half the width of the interval a rate near `v` will have on `n` trials (each end a one-sided
/// `1 − alpha` Wilson bound).
fn one_rate_half_width(n: u64, v: f64, alpha: f64) -> f64 {
    let k = (v.clamp(0.0, 1.0) * n as f64).round() as u64;
    stats::proportion_interval(stats::Proportion::new(k, n), 1.0 - 2.0 * alpha, stats::Sides::TwoSided, stats::ProportionMethod::Wilson)
        .half_width()
}

fn pct(x: f64) -> String {
    let p = 100.0 * x;
    if (p - p.round()).abs() < 1e-9 { format!("{p:.0}%") } else { format!("{p:.1}%") }
}

fn pp(x: f64) -> String {
    format!("{:.0} pp", 100.0 * x)
}

fn signed_pp(x: f64) -> String {
    if (100.0 * x).round() == 0.0 { "0 pp".into() } else { format!("{:+.0} pp", 100.0 * x) }
}

/// Four decimals are plenty for a planning figure, and keep the lock readable.
fn round4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

/// What the design can detect for `p` at level `alpha`.
#[must_use]
pub fn detectable(p: &Prediction, design: &DesignInfo, alpha: f64) -> Detectable {
    let mut d = detectable_raw(p, design, alpha);
    d.detectable = d.detectable.map(round4);
    d
}

fn detectable_raw(p: &Prediction, design: &DesignInfo, alpha: f64) -> Detectable {
    let c = &p.claim;
    let mut out = Detectable { id: p.id.clone(), n: None, detectable: None, underpowered: false, note: String::new() };
    let quantity = c.metric.quantity();
    if quantity == Quantity::Count {
        out.note = "exact count: no sampling error".into();
        return out;
    }
    let (n, pairing) = match &c.versus {
        Some(b) => match design.pair(&c.arm, b) {
            Some((n, pairing)) => (n, Some(pairing)),
            None => (0, None),
        },
        None => (design.arm_n(&c.arm).unwrap_or(0), None),
    };
    if n == 0 {
        out.note = "n unknown: seal with a study whose transcripts exist, or pass --n".into();
        return out;
    }
    out.n = Some(n);
    // Class shares are over failures, fewer than the tasks: the figures are a best case.
    let over_failures = matches!(c.metric, Metric::ClassRate | Metric::ClassRateDiff);
    let suffix = if over_failures { format!(" (best case: a share of at most {n} failures)") } else { String::new() };
    let v = c.value;
    let tol = c.tolerance.unwrap_or(0.0).abs();
    match quantity {
        Quantity::Rate => {
            if c.comparator.is_band() {
                let h = one_rate_half_width(n, v, alpha);
                out.detectable = Some(h);
                out.underpowered = tol <= h;
                out.note = if out.underpowered {
                    format!(
                        "cannot be confirmed at n={n}: the interval is about ±{:.0} pp, the tolerance ±{:.0} pp{suffix}",
                        100.0 * h,
                        100.0 * tol
                    )
                } else {
                    format!("confirmable if the rate is near {}: the interval is about ±{:.0} pp{suffix}", pct(v), 100.0 * h)
                };
                return out;
            }
            // Confirming "≥ v" needs the truth above v; refuting it needs the truth below.
            let up = one_rate_detectable(n, v, alpha, POWER);
            let down = one_rate_detectable(n, 1.0 - v, alpha, POWER);
            let (confirm, refute) = if matches!(c.comparator, Comparator::Ge | Comparator::Gt) {
                (up.map(|d| (d, v + d)), down.map(|d| (d, v - d)))
            } else {
                (down.map(|d| (d, v - d)), up.map(|d| (d, v + d)))
            };
            out.detectable = confirm.map(|x| x.0).or(refute.map(|x| x.0));
            out.underpowered = confirm.is_none() || refute.is_none();
            let side = |s: &str| if matches!(c.comparator, Comparator::Ge | Comparator::Gt) == (s == "c") { "≥" } else { "≤" };
            let mut parts = Vec::new();
            parts.push(match confirm {
                Some((_, at)) => format!("confirmed (80% power) if the true rate is {} {}", side("c"), pct(at)),
                None => format!("cannot be confirmed at n={n}"),
            });
            parts.push(match refute {
                Some((_, at)) => format!("refuted if {} {}", side("r"), pct(at)),
                None => format!("cannot be refuted at n={n}"),
            });
            out.note = parts.join(", ") + &suffix;
        }
        Quantity::Difference => {
            let pairing = if over_failures { Pairing::Unpaired } else { pairing.unwrap_or(Pairing::Paired) };
            let base = match pairing {
                Pairing::Paired => Design::paired(n, 0.5),
                Pairing::Unpaired => Design::unpaired(n, 0.5),
            };
            let mde = stats::min_detectable_difference(Design { alpha: 2.0 * alpha, ..base }).smallest;
            let how = match pairing {
                Pairing::Paired if design.n.is_some() => "paired best case (pairing unknown with --n)",
                Pairing::Paired => "paired, best case",
                Pairing::Unpaired => "unpaired, 50% baseline",
            };
            let Some(m) = mde else {
                out.underpowered = true;
                out.note = format!("this design cannot detect any difference at n={n} ({how}){suffix}");
                return out;
            };
            out.detectable = Some(m);
            if c.comparator.is_band() {
                let normal = normal();
                let z_a = normal.inverse_cdf(1.0 - alpha);
                let h = m * z_a / (z_a + normal.inverse_cdf(POWER));
                out.detectable = Some(h);
                out.underpowered = tol <= h;
                out.note = if out.underpowered {
                    format!("cannot be confirmed at n={n}: the interval is about ±{}, the tolerance ±{} ({how}){suffix}", pp(h), pp(tol))
                } else {
                    format!("confirmable if the difference is near {}: the interval is about ±{} ({how}){suffix}", signed_pp(v), pp(h))
                };
                return out;
            }
            let ge = matches!(c.comparator, Comparator::Ge | Comparator::Gt);
            let (confirm_at, refute_at) = if ge { (v + m, v - m) } else { (v - m, v + m) };
            let (c_ok, r_ok) = ((-1.0..=1.0).contains(&confirm_at), (-1.0..=1.0).contains(&refute_at));
            out.underpowered = !c_ok || !r_ok;
            let (cs, rs) = if ge { ("≥", "≤") } else { ("≤", "≥") };
            out.note = format!(
                "smallest detectable difference ~{} ({how}): {}, {}{suffix}",
                pp(m),
                if c_ok {
                    format!("confirmed if the true difference is {cs} {}", signed_pp(confirm_at))
                } else {
                    format!("cannot be confirmed at n={n}")
                },
                if r_ok { format!("refuted if {rs} {}", signed_pp(refute_at)) } else { format!("cannot be refuted at n={n}") },
            );
        }
        Quantity::Count => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predict::model::Claim;

    fn prediction(metric: Metric, versus: Option<&str>, comparator: Comparator, value: f64, tolerance: Option<f64>) -> Prediction {
        Prediction {
            id: "p".into(),
            claim: Claim { metric, arm: "a".into(), versus: versus.map(String::from), class: None, comparator, value, tolerance },
            rationale: "r".into(),
            escape_clause: "e".into(),
            retracted: None,
        }
    }

    #[test]
    fn one_rate_detectable_matches_the_normal_formula() {
        // Rate 0.5 at n = 100, one-sided 5%, 80% power: about (1.645 + 0.842)·0.05 = 12.4 pp.
        let d = one_rate_detectable(100, 0.5, 0.05, 0.8).unwrap();
        assert!((d - 0.124).abs() < 0.005, "{d}");
        assert_eq!(one_rate_detectable(3, 0.9, 0.05, 0.8), None);
        assert_eq!(one_rate_detectable(0, 0.5, 0.05, 0.8), None);
    }

    #[test]
    fn underpowered_claims_are_flagged() {
        let design = DesignInfo { n: Some(34), ..DesignInfo::default() };
        // "At least 5%" at 34 tasks can never be refuted (the truth would need to be below 0).
        let weak = detectable(&prediction(Metric::PassRate, None, Comparator::Ge, 0.05, None), &design, 0.05);
        assert!(weak.underpowered && weak.note.contains("cannot be refuted"), "{weak:?}");
        let fine = detectable(&prediction(Metric::PassRate, None, Comparator::Ge, 0.3, None), &design, 0.05);
        assert!(!fine.underpowered, "{fine:?}");
        // "Within ±5 pp" of the other arm: the interval of a paired difference at 34 tasks is wider.
        let band = detectable(&prediction(Metric::PassRateDiff, Some("b"), Comparator::Approx, 0.0, Some(0.05)), &design, 0.05);
        assert!(band.underpowered && band.note.contains("cannot be confirmed"), "{band:?}");
        let wide = detectable(&prediction(Metric::PassRateDiff, Some("b"), Comparator::Approx, 0.0, Some(0.25)), &design, 0.05);
        assert!(!wide.underpowered, "{wide:?}");
        let count = detectable(&prediction(Metric::Timeouts, None, Comparator::Le, 3.0, None), &design, 0.05);
        assert!(!count.underpowered && count.n.is_none());
        let unknown = detectable(&prediction(Metric::PassRate, None, Comparator::Ge, 0.3, None), &DesignInfo::default(), 0.05);
        assert!(unknown.note.starts_with("n unknown"));
    }
}
