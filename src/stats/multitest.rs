//! Adjusted p-values for several claims checked at once (registered predictions, per-class
//! comparisons): without adjustment, one of twenty true-null claims "succeeds" by chance.

use serde::Serialize;

/// How to adjust for multiple comparisons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Adjustment {
    /// Holm's step-down: controls the family-wise error rate, uniformly better than Bonferroni.
    /// The default for registered predictions.
    #[default]
    Holm,
    /// Bonferroni: `min(1, m·p)`.
    Bonferroni,
    /// Benjamini–Hochberg: controls the false discovery rate under independence.
    BenjaminiHochberg,
    /// Benjamini–Yekutieli: false discovery rate under any dependence.
    BenjaminiYekutieli,
    /// Hommel: family-wise, more powerful than Holm under independence or positive dependence.
    Hommel,
}

/// One adjusted p-value and whether its claim is rejected at the family level.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Adjusted {
    pub p_raw: f64,
    pub p_adjusted: f64,
    /// `p_adjusted <= alpha`.
    pub reject: bool,
}

/// Adjusted p-values in the input order (as statsmodels `multipletests`). NaN p-values count as 1
/// and values outside `[0, 1]` are clamped, so a broken input cannot make another claim look
/// significant. An empty input gives an empty output.
pub fn adjust_p_values(p: &[f64], method: Adjustment) -> Vec<f64> {
    let m = p.len();
    if m == 0 {
        return Vec::new();
    }
    let clean: Vec<f64> = p.iter().map(|&x| if x.is_nan() { 1.0 } else { x.clamp(0.0, 1.0) }).collect();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| clean[a].total_cmp(&clean[b]));
    let sorted: Vec<f64> = order.iter().map(|&i| clean[i]).collect();
    let mf = m as f64;
    let adjusted_sorted: Vec<f64> = match method {
        Adjustment::Bonferroni => sorted.iter().map(|x| x * mf).collect(),
        Adjustment::Holm => {
            let mut run = 0.0f64;
            sorted
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    run = run.max(x * (m - i) as f64);
                    run
                })
                .collect()
        }
        Adjustment::BenjaminiHochberg | Adjustment::BenjaminiYekutieli => {
            let c = if method == Adjustment::BenjaminiYekutieli { (1..=m).map(|i| 1.0 / i as f64).sum() } else { 1.0 };
            let mut out = vec![0.0; m];
            let mut run = f64::INFINITY;
            for i in (0..m).rev() {
                run = run.min(sorted[i] / ((i + 1) as f64 / mf / c));
                out[i] = run;
            }
            out
        }
        Adjustment::Hommel => hommel(&sorted),
    };
    let mut out = vec![0.0; m];
    for (rank, &i) in order.iter().enumerate() {
        out[i] = adjusted_sorted[rank].min(1.0);
    }
    out
}

/// Hommel's procedure on ascending p-values (Wright 1992): for each subset size j from m down to
/// 2, the Simes-type minimum `c = min_k j·p_(m−j+k)/k` raises the adjusted values.
fn hommel(sorted: &[f64]) -> Vec<f64> {
    let m = sorted.len();
    let mut a = sorted.to_vec();
    for j in (2..=m).rev() {
        let tail = &sorted[m - j..];
        let c = tail.iter().enumerate().map(|(k, p)| j as f64 * p / (k + 1) as f64).fold(f64::INFINITY, f64::min);
        for (idx, v) in a.iter_mut().enumerate() {
            if idx >= m - j {
                *v = v.max(c);
            } else {
                *v = v.max((j as f64 * sorted[idx]).min(c));
            }
        }
    }
    a
}

/// Adjusted p-values with the reject decision at family level `alpha`.
pub fn adjust(p: &[f64], method: Adjustment, alpha: f64) -> Vec<Adjusted> {
    adjust_p_values(p, method)
        .into_iter()
        .zip(p)
        .map(|(adj, &raw)| Adjusted { p_raw: raw, p_adjusted: adj, reject: adj <= alpha })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Adjustment; 5] =
        [Adjustment::Holm, Adjustment::Bonferroni, Adjustment::BenjaminiHochberg, Adjustment::BenjaminiYekutieli, Adjustment::Hommel];

    #[test]
    fn empty_single_and_broken_inputs() {
        for m in ALL {
            assert!(adjust_p_values(&[], m).is_empty());
            assert_eq!(adjust_p_values(&[0.03], m), vec![0.03]);
            let a = adjust_p_values(&[f64::NAN, -1.0, 2.0, 0.01], m);
            assert!(a.iter().all(|x| (0.0..=1.0).contains(x)), "{m:?}: {a:?}");
            assert_eq!(a[0], 1.0);
        }
    }
}
