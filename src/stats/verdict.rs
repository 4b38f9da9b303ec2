//! A plain-language verdict for a comparison: better, worse, or no detectable difference, with
//! a sentence that says how large a difference the design could have detected, so "no
//! difference" is never read as "the same".

use serde::Serialize;

use super::types::Estimate;

/// What a comparison showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictKind {
    /// The whole interval of the difference is above 0.
    Better,
    /// The whole interval is below 0.
    Worse,
    /// The interval includes 0.
    NoDetectableDifference,
}

/// A verdict with its sentence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    pub kind: VerdictKind,
    /// For example "better by 21 pp (95% CI 3 to 36 pp) at n=34" or
    /// "no detectable difference at n=34 (smallest difference this design can detect: ~22 pp)".
    pub sentence: String,
}

/// The verdict on a difference (one arm minus the other, as a fraction, with its interval at
/// `confidence`), for a design on `n` tasks whose minimum detectable difference is `detectable`
/// ([`DetectableDifference::smallest`](super::DetectableDifference::smallest); `None` when the design
/// cannot detect any difference).
pub fn verdict(difference: Estimate, detectable: Option<f64>, n: u64, confidence: f64) -> Verdict {
    let i = difference.interval;
    let level = format!("{}%", trim(100.0 * confidence));
    let pp = |x: f64| (100.0 * x).round() as i64;
    if i.lo > 0.0 || i.hi < 0.0 {
        let (kind, word) = if i.lo > 0.0 { (VerdictKind::Better, "better") } else { (VerdictKind::Worse, "worse") };
        let sentence = format!("{word} by {} pp ({level} CI {} to {} pp) at n={n}", pp(difference.estimate.abs()), pp(i.lo), pp(i.hi));
        return Verdict { kind, sentence };
    }
    let detect = match detectable {
        Some(d) => format!("smallest difference this design can detect: ~{} pp", pp(d)),
        None => "this design cannot reliably detect any difference".to_owned(),
    };
    Verdict { kind: VerdictKind::NoDetectableDifference, sentence: format!("no detectable difference at n={n} ({detect})") }
}

/// `95` rather than `95.0`, `99.9` kept.
fn trim(x: f64) -> String {
    let r = (x * 10.0).round() / 10.0;
    if r.fract() == 0.0 { format!("{}", r as i64) } else { format!("{r}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences() {
        let v = verdict(Estimate::new(0.03, -0.12, 0.17), Some(0.2226), 34, 0.95);
        assert_eq!(v.kind, VerdictKind::NoDetectableDifference);
        assert_eq!(v.sentence, "no detectable difference at n=34 (smallest difference this design can detect: ~22 pp)");
        let v = verdict(Estimate::new(0.206, 0.034, 0.364), Some(0.2226), 34, 0.95);
        assert_eq!((v.kind, v.sentence.as_str()), (VerdictKind::Better, "better by 21 pp (95% CI 3 to 36 pp) at n=34"));
        let v = verdict(Estimate::new(-0.286, -0.507, -0.026), None, 21, 0.9);
        assert_eq!((v.kind, v.sentence.as_str()), (VerdictKind::Worse, "worse by 29 pp (90% CI -51 to -3 pp) at n=21"));
        let v = verdict(Estimate::new(0.0, -1.0, 1.0), None, 0, 0.95);
        assert_eq!(v.sentence, "no detectable difference at n=0 (this design cannot reliably detect any difference)");
    }
}
