//! Agreement between two raters of the same items (a human spot-check against the classifier):
//! the confusion matrix, raw agreement, Cohen's kappa with its Fleiss–Cohen–Everitt (1969)
//! large-sample interval, and per-class precision, recall and F1.

use std::collections::BTreeSet;

use serde::Serialize;

use super::dist::{two_sided_p, z_two_sided};
use super::proportion::wilson;
use super::types::{Interval, Proportion};

/// Counts of (reference label, predicted label) pairs. Rows are the reference (the human, the
/// truth), columns the prediction (the classifier), both in `labels` order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfusionMatrix {
    pub labels: Vec<String>,
    /// `counts[i][j]`: items the reference labelled `labels[i]` and the prediction `labels[j]`.
    pub counts: Vec<Vec<u64>>,
}

impl ConfusionMatrix {
    /// From (reference, predicted) pairs; the labels are every label seen, sorted.
    pub fn from_pairs<R: AsRef<str>, P: AsRef<str>>(pairs: impl IntoIterator<Item = (R, P)>) -> Self {
        let pairs: Vec<(String, String)> = pairs.into_iter().map(|(r, p)| (r.as_ref().to_owned(), p.as_ref().to_owned())).collect();
        let labels: BTreeSet<&String> = pairs.iter().flat_map(|(r, p)| [r, p]).collect();
        let labels: Vec<String> = labels.into_iter().cloned().collect();
        Self::with_labels(labels, pairs)
    }

    /// From (reference, predicted) pairs with a fixed label order; pairs with a label outside
    /// `labels` are appended as new labels, so no item is dropped silently.
    pub fn with_labels<R: AsRef<str>, P: AsRef<str>>(labels: Vec<String>, pairs: impl IntoIterator<Item = (R, P)>) -> Self {
        let mut cm = Self { counts: vec![vec![0; labels.len()]; labels.len()], labels };
        for (r, p) in pairs {
            let i = cm.index_of(r.as_ref());
            let j = cm.index_of(p.as_ref());
            cm.counts[i][j] += 1;
        }
        cm
    }

    fn index_of(&mut self, label: &str) -> usize {
        if let Some(i) = self.labels.iter().position(|l| l == label) {
            return i;
        }
        self.labels.push(label.to_owned());
        for row in &mut self.counts {
            row.push(0);
        }
        self.counts.push(vec![0; self.labels.len()]);
        self.labels.len() - 1
    }

    /// Number of items.
    pub fn total(&self) -> u64 {
        self.counts.iter().flatten().sum()
    }

    /// Items both raters labelled the same.
    pub fn agreed(&self) -> u64 {
        (0..self.labels.len()).map(|i| self.counts[i][i]).sum()
    }

    /// Raw agreement (accuracy) with its Wilson interval; 0 and `[0, 1]` when there are no items.
    pub fn agreement(&self, confidence: f64) -> (f64, Interval) {
        let p = Proportion::new(self.agreed(), self.total());
        (p.rate(), wilson(p, confidence))
    }

    fn row_total(&self, i: usize) -> u64 {
        self.counts[i].iter().sum()
    }

    fn col_total(&self, j: usize) -> u64 {
        self.counts.iter().map(|r| r[j]).sum()
    }

    /// Precision, recall, F1 and support per label, recall with its Wilson interval. A ratio with
    /// a zero denominator is 0 (scikit-learn's `zero_division=0`), and the recall interval of a
    /// label nobody assigned as reference is `[0, 1]`.
    pub fn per_class(&self, confidence: f64) -> Vec<ClassMetrics> {
        (0..self.labels.len())
            .map(|i| {
                let tp = self.counts[i][i];
                let (support, predicted) = (self.row_total(i), self.col_total(i));
                let precision = ratio(tp, predicted);
                let recall = ratio(tp, support);
                ClassMetrics {
                    label: self.labels[i].clone(),
                    precision,
                    recall,
                    f1: f1(precision, recall),
                    support,
                    recall_interval: wilson(Proportion::new(tp, support), confidence),
                }
            })
            .collect()
    }

    /// Macro, support-weighted and micro averages of precision, recall and F1 (as scikit-learn).
    pub fn averages(&self) -> Averages {
        let per = self.per_class(0.95);
        let k = per.len() as f64;
        let mean = |f: &dyn Fn(&ClassMetrics) -> f64| if per.is_empty() { 0.0 } else { per.iter().map(f).sum::<f64>() / k };
        let support: u64 = per.iter().map(|c| c.support).sum();
        let weighted = |f: &dyn Fn(&ClassMetrics) -> f64| {
            if support == 0 { 0.0 } else { per.iter().map(|c| c.support as f64 * f(c)).sum::<f64>() / support as f64 }
        };
        let tp = self.agreed();
        let predicted: u64 = (0..self.labels.len()).map(|j| self.col_total(j)).sum();
        let (mp, mr) = (ratio(tp, predicted), ratio(tp, support));
        Averages {
            macro_avg: Prf { precision: mean(&|c| c.precision), recall: mean(&|c| c.recall), f1: mean(&|c| c.f1) },
            weighted: Prf { precision: weighted(&|c| c.precision), recall: weighted(&|c| c.recall), f1: weighted(&|c| c.f1) },
            micro: Prf { precision: mp, recall: mr, f1: f1(mp, mr) },
        }
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

fn f1(p: f64, r: f64) -> f64 {
    if p + r == 0.0 { 0.0 } else { 2.0 * p * r / (p + r) }
}

/// Precision, recall and F1 of one label.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassMetrics {
    pub label: String,
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    /// Items the reference gave this label.
    pub support: u64,
    pub recall_interval: Interval,
}

/// Precision, recall and F1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Prf {
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
}

/// Averages over labels.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Averages {
    #[serde(rename = "macro")]
    pub macro_avg: Prf,
    pub weighted: Prf,
    pub micro: Prf,
}

/// Cohen's kappa and what a report needs around it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Kappa {
    pub kappa: f64,
    /// Fleiss–Cohen–Everitt (1969) large-sample standard error (statsmodels `std_kappa`).
    pub se: f64,
    /// `kappa ± z·se`, clipped to `[-1, 1]`.
    pub interval: Interval,
    /// Observed agreement (raw agreement, accuracy).
    pub p_observed: f64,
    /// Agreement expected by chance from the two raters' label frequencies.
    pub p_expected: f64,
    /// Standard error under "no agreement beyond chance" (statsmodels `std_kappa0`).
    pub se_null: f64,
    /// `kappa / se_null` and its two-sided normal p-value.
    pub z_null: f64,
    pub p_value_null: f64,
    /// Cohen's (1960) simpler approximation `sqrt(po(1−po)/(n(1−pe)²))`.
    pub se_cohen_1960: f64,
    pub n: u64,
    /// False when kappa is undefined: no items, or both raters used one and the same label for
    /// every item (chance agreement is then total). Kappa, its standard errors and z are then 0,
    /// the interval `[-1, 1]` and the p-value 1.
    pub defined: bool,
}

/// Cohen's kappa of a confusion matrix with its interval at `confidence` (the 95% interval is the
/// one in `vectors_kappa.csv`: `kappa ± 1.959963984540054·se_FCE`).
pub fn cohen_kappa(cm: &ConfusionMatrix, confidence: f64) -> Kappa {
    let n = cm.total();
    let k = cm.labels.len();
    let nf = n as f64;
    let undefined = |p_observed: f64, p_expected: f64| Kappa {
        kappa: 0.0,
        se: 0.0,
        interval: Interval::new(-1.0, 1.0),
        p_observed,
        p_expected,
        se_null: 0.0,
        z_null: 0.0,
        p_value_null: 1.0,
        se_cohen_1960: 0.0,
        n,
        defined: false,
    };
    if n == 0 {
        return undefined(0.0, 0.0);
    }
    let p = |i: usize, j: usize| cm.counts[i][j] as f64 / nf;
    let rows: Vec<f64> = (0..k).map(|i| cm.row_total(i) as f64 / nf).collect();
    let cols: Vec<f64> = (0..k).map(|j| cm.col_total(j) as f64 / nf).collect();
    let po: f64 = (0..k).map(|i| p(i, i)).sum();
    let pe: f64 = (0..k).map(|i| rows[i] * cols[i]).sum();
    if 1.0 - pe <= 1e-15 {
        return undefined(po, pe);
    }
    let kappa = (po - pe) / (1.0 - pe);
    let a: f64 = (0..k).map(|i| p(i, i) * (1.0 - (rows[i] + cols[i]) * (1.0 - kappa)).powi(2)).sum();
    let off_diagonal: f64 =
        (0..k).flat_map(|i| (0..k).map(move |j| (i, j))).filter(|(i, j)| i != j).map(|(i, j)| p(i, j) * (cols[i] + rows[j]).powi(2)).sum();
    let b = (1.0 - kappa).powi(2) * off_diagonal;
    let c = (kappa - pe * (1.0 - kappa)).powi(2);
    let denom = nf * (1.0 - pe).powi(2);
    let se = ((a + b - c) / denom).max(0.0).sqrt();
    let var0 = (pe + pe * pe - (0..k).map(|i| rows[i] * cols[i] * (rows[i] + cols[i])).sum::<f64>()) / denom;
    let se_null = var0.max(0.0).sqrt();
    let z_null = if se_null > 0.0 { kappa / se_null } else { 0.0 };
    let z = z_two_sided(confidence);
    Kappa {
        kappa,
        se,
        interval: Interval::new(kappa - z * se, kappa + z * se).clamp(-1.0, 1.0),
        p_observed: po,
        p_expected: pe,
        se_null,
        z_null,
        p_value_null: if se_null > 0.0 { two_sided_p(z_null) } else { 1.0 },
        se_cohen_1960: (po * (1.0 - po) / denom).max(0.0).sqrt(),
        n,
        defined: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_items_and_a_single_shared_label_are_undefined() {
        let empty = ConfusionMatrix::from_pairs(Vec::<(&str, &str)>::new());
        let k = cohen_kappa(&empty, 0.95);
        assert!(!k.defined && k.kappa == 0.0 && k.interval == Interval::new(-1.0, 1.0) && k.p_value_null == 1.0);
        assert_eq!(empty.agreement(0.95), (0.0, Interval::new(0.0, 1.0)));
        assert_eq!(empty.averages().micro.f1, 0.0);
        let same = ConfusionMatrix::from_pairs([("a", "a"), ("a", "a")]);
        let k = cohen_kappa(&same, 0.95);
        assert!(!k.defined && k.p_observed == 1.0);
        let one = cohen_kappa(&ConfusionMatrix::from_pairs([("a", "b")]), 0.95);
        assert!(one.kappa.is_finite() && one.interval.lo >= -1.0);
    }

    #[test]
    fn unknown_labels_are_appended_not_dropped() {
        let cm = ConfusionMatrix::with_labels(vec!["x".into()], [("x", "y"), ("y", "y")]);
        assert_eq!(cm.labels, vec!["x", "y"]);
        assert_eq!(cm.counts, vec![vec![0, 1], vec![0, 1]]);
        assert_eq!(cm.total(), 2);
    }
}
