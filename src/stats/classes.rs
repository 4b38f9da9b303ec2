//! Failure-class rates per arm and their differences: the share of an arm's failures that fell
//! into each class (Wilson interval), and arm A's share minus arm B's (Newcombe hybrid interval,
//! since the failures of two arms are independent samples even when the tasks are shared).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::proportion::{ProportionMethod, rate_estimate};
use super::types::{Estimate, Proportion};
use super::unpaired::{UnpairedDiffMethod, unpaired_difference};

/// One arm's failures and how many fell into each class. A class count above `failures` is
/// treated as `failures`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct ClassCounts {
    pub failures: u64,
    pub by_class: BTreeMap<String, u64>,
}

/// A class's share of one arm's failures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ClassRate {
    pub count: Proportion,
    /// `count / failures` with its Wilson interval (0 and `[0, 1]` for an arm with no failures).
    pub rate: Estimate,
}

/// The share of `count` among `failures`, with its Wilson interval.
pub fn class_rate(count: u64, failures: u64, confidence: f64) -> ClassRate {
    let p = Proportion::new(count, failures);
    ClassRate { count: p, rate: rate_estimate(p, confidence, ProportionMethod::Wilson) }
}

/// Every class of one arm with its rate, in class order.
pub fn class_rates(arm: &ClassCounts, confidence: f64) -> Vec<(String, ClassRate)> {
    arm.by_class.iter().map(|(c, &k)| (c.clone(), class_rate(k, arm.failures, confidence))).collect()
}

/// One class compared between two arms.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassComparison {
    pub class: String,
    pub a: ClassRate,
    pub b: ClassRate,
    /// A's rate minus B's, with the Newcombe hybrid interval (estimate 0 and `[-1, 1]` when an arm
    /// has no failures).
    pub difference: Estimate,
}

/// Compares every class seen in either arm (a class missing from an arm counts 0 there), in class
/// order.
pub fn compare_classes(a: &ClassCounts, b: &ClassCounts, confidence: f64) -> Vec<ClassComparison> {
    let classes: BTreeSet<&String> = a.by_class.keys().chain(b.by_class.keys()).collect();
    classes
        .into_iter()
        .map(|class| {
            let ka = a.by_class.get(class).copied().unwrap_or(0);
            let kb = b.by_class.get(class).copied().unwrap_or(0);
            let (ra, rb) = (class_rate(ka, a.failures, confidence), class_rate(kb, b.failures, confidence));
            ClassComparison {
                class: class.clone(),
                a: ra,
                b: rb,
                difference: unpaired_difference(ra.count, rb.count, confidence, UnpairedDiffMethod::NewcombeHybrid),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arms_without_failures_and_missing_classes() {
        let a = ClassCounts { failures: 0, by_class: BTreeMap::new() };
        let b = ClassCounts { failures: 10, by_class: [("timeout".to_owned(), 4)].into() };
        let cmp = compare_classes(&a, &b, 0.95);
        assert_eq!(cmp.len(), 1);
        assert_eq!(cmp[0].a.rate, Estimate::new(0.0, 0.0, 1.0));
        assert_eq!(cmp[0].difference, Estimate::new(0.0, -1.0, 1.0));
        assert!(compare_classes(&a, &a, 0.95).is_empty());
        let over = class_rate(12, 10, 0.95);
        assert_eq!(over.rate.estimate, 1.0);
    }
}
