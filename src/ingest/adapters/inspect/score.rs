//! A sample's verdict from its `scores`: the first scorer decides, every scorer is kept as a
//! test row, and each value is read as Inspect's `value_to_float` reads it.

use serde_json::Value;

use super::sample::{RawSample, text_of};
use crate::model::{Outcome, OutcomeStatus, TestResult};

/// A score value as Inspect's `value_to_float` reads it: `C` 1, `P` 0.5, `I` and `N` 0,
/// yes/true 1, no/false 0, numeric strings and numbers as themselves.
fn score_float(v: &Value) -> Option<f64> {
    match v {
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        Value::Number(n) => n.as_f64(),
        Value::String(s) => match s.as_str() {
            "C" => Some(1.0),
            "P" => Some(0.5),
            "I" | "N" => Some(0.0),
            other => match other.to_ascii_lowercase().as_str() {
                "yes" | "true" => Some(1.0),
                "no" | "false" => Some(0.0),
                x => x.trim().parse().ok(),
            },
        },
        _ => None,
    }
}

fn status_of(x: f64) -> OutcomeStatus {
    if x >= 1.0 {
        OutcomeStatus::Passed
    } else if x <= 0.0 {
        OutcomeStatus::Failed
    } else {
        OutcomeStatus::Partial
    }
}

/// One score value into a verdict: scalars directly; a dict or list (several metrics from one
/// scorer) passes when all its parts pass, fails when all fail, is partial otherwise.
fn score_outcome(value: &Value, file: &str, field: &str) -> Outcome {
    let parts: Vec<(String, &Value)> = match value {
        Value::Object(o) => o.iter().map(|(k, v)| (k.clone(), v)).collect(),
        Value::Array(a) => a.iter().enumerate().map(|(i, v)| (i.to_string(), v)).collect(),
        _ => Vec::new(),
    };
    if parts.is_empty() {
        return match score_float(value) {
            Some(x) if (0.0..=1.0).contains(&x) => {
                let mut o = Outcome::new(status_of(x), file, field);
                o.reward = Some(x);
                if value.as_str() == Some("N") {
                    o.detail = Some("no answer (N)".into());
                }
                o
            }
            Some(x) => {
                let mut o = Outcome::new(OutcomeStatus::Unknown, file, field);
                o.reward = Some(x);
                o.detail = Some(format!("numeric score {x} is outside [0, 1]; its scale is the scorer's own"));
                o
            }
            None => {
                let mut o = Outcome::new(OutcomeStatus::Unknown, file, field);
                o.detail = Some(format!("score value {} is not one coroner can read as pass/fail", text_of(value)));
                o
            }
        };
    }
    let floats: Vec<Option<f64>> = parts.iter().map(|(_, v)| score_float(v).filter(|x| (0.0..=1.0).contains(x))).collect();
    let tests: Vec<TestResult> = parts
        .iter()
        .zip(&floats)
        .map(|((k, v), f)| TestResult::new(k.clone(), f.map_or_else(|| text_of(v).to_lowercase(), |x| status_of(x).as_str().to_string())))
        .collect();
    let mut o = if floats.iter().all(Option::is_some) {
        let xs: Vec<f64> = floats.iter().flatten().copied().collect();
        let status = if xs.iter().all(|x| *x >= 1.0) {
            OutcomeStatus::Passed
        } else if xs.iter().all(|x| *x <= 0.0) {
            OutcomeStatus::Failed
        } else {
            OutcomeStatus::Partial
        };
        let mut o = Outcome::new(status, file, field);
        #[expect(clippy::cast_precision_loss, reason = "a handful of metrics")]
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        o.reward = Some(mean);
        o
    } else {
        let mut o = Outcome::new(OutcomeStatus::Unknown, file, field);
        o.detail = Some("a part of the score is not readable as pass/fail".into());
        o
    };
    o.tests = tests;
    o
}

/// The verdict of the first scorer, and its extracted answer.
pub fn outcome(s: &RawSample<'_>, file: &str) -> (Outcome, Option<String>) {
    let mut scores: Vec<(String, &Value)> = s.scores.iter().flat_map(|m| m.iter().map(|(k, v)| (k.clone(), v))).collect();
    if scores.is_empty()
        && let Some(v) = &s.score
    {
        scores.push(("score".into(), v));
    }
    let Some((name, first)) = scores.first() else { return (Outcome::unknown(), None) };
    let value = first.get("value").unwrap_or(&Value::Null);
    let mut o = score_outcome(value, file, &format!("scores.{name}.value"));
    if scores.len() > 1 {
        // Every scorer's verdict, so a reader sees the ones the first one hides.
        let mut tests = vec![TestResult::new(name.clone(), o.status.as_str())];
        for (n, sc) in &scores[1..] {
            let v = score_outcome(sc.get("value").unwrap_or(&Value::Null), file, "");
            tests.push(TestResult::new(n.clone(), v.status.as_str()));
        }
        if o.tests.is_empty() {
            o.tests = tests;
        } else {
            o.tests.extend(tests);
        }
    }
    if o.detail.is_none() {
        o.detail = first
            .get("explanation")
            .and_then(Value::as_str)
            .map(|e| e.lines().next().unwrap_or_default().chars().take(200).collect::<String>())
            .filter(|e| !e.is_empty());
    }
    let answer = first.get("answer").and_then(Value::as_str).map(ToString::to_string);
    (o, answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome_of(v: Value) -> Outcome {
        score_outcome(&v, "f", "scores.x.value")
    }

    #[test]
    fn score_values_of_every_kind() {
        assert_eq!(outcome_of(serde_json::json!("C")).status, OutcomeStatus::Passed);
        assert_eq!(outcome_of(serde_json::json!("I")).status, OutcomeStatus::Failed);
        assert_eq!(outcome_of(serde_json::json!("P")).reward, Some(0.5));
        assert_eq!(outcome_of(serde_json::json!(true)).status, OutcomeStatus::Passed);
        assert_eq!(outcome_of(serde_json::json!(0)).status, OutcomeStatus::Failed);
        assert_eq!(outcome_of(serde_json::json!(1.0)).status, OutcomeStatus::Passed);
        assert_eq!(outcome_of(serde_json::json!(7)).status, OutcomeStatus::Unknown, "a score outside [0, 1] has its own scale");
        let d = outcome_of(serde_json::json!({"accuracy": "C", "f1": 0.5}));
        assert_eq!((d.status, d.reward), (OutcomeStatus::Partial, Some(0.75)));
        assert_eq!(
            d.tests.iter().map(|t| (t.name.as_str(), t.status.as_str())).collect::<Vec<_>>(),
            [("accuracy", "passed"), ("f1", "partial")]
        );
        assert_eq!(outcome_of(serde_json::json!({"a": "C", "b": true})).status, OutcomeStatus::Passed);
        assert_eq!(outcome_of(Value::Null).status, OutcomeStatus::Unknown);
    }
}
