//! Thresholds as CI gates: `report --fail-if "infrastructure > 5%"`. A small expression language
//! over the report's numbers, one comparison per expression:
//!
//! ```text
//! expr   := metric [ "(" arm ")" ] op number [ "%" ]
//! metric := pass_rate | passed | failed | infrastructure | unknown | CLASS | FLAG
//! arm    := 'name' | "name"
//! op     := > | >= | < | <= | == | !=
//! ```
//!
//! `pass_rate` is the arm's pass@1 (infrastructure failures and unknown outcomes excluded, as in
//! the arms table). Every other metric is a share of the arm's trajectories: `passed`, `failed`
//! (classified, not infrastructure), `infrastructure`, `unknown` (no outcome), a class of the
//! taxonomy as the primary class (`unclassified` among them), or a flag. `5%` is 0.05; a bare
//! number is a fraction, so a bare number above 1 is refused as ambiguous. Without an arm,
//! every arm is checked. A mistake is a diagnostic pointing into the expression.

use miette::{Diagnostic, NamedSource, SourceSpan};
use serde::Serialize;

use super::tables::Report;
use crate::rules::Rules;

/// A parsed threshold.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    pub text: String,
    pub metric: String,
    pub arm: Option<String>,
    pub op: Op,
    pub value: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Gt,
    Ge,
    Lt,
    Le,
    Eq,
    Ne,
}

impl Op {
    fn holds(self, a: f64, b: f64) -> bool {
        match self {
            Self::Gt => a > b,
            Self::Ge => a >= b,
            Self::Lt => a < b,
            Self::Le => a <= b,
            Self::Eq => (a - b).abs() < 1e-12,
            Self::Ne => (a - b).abs() >= 1e-12,
        }
    }
}

/// A threshold that cannot be read or applied, pointing into its text.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("failed to read --fail-if `{text}`: {message}")]
#[diagnostic(code(coroner::report::fail_if))]
pub struct GateError {
    pub text: String,
    pub message: String,
    #[source_code]
    pub src: NamedSource<String>,
    #[label("{label}")]
    pub span: SourceSpan,
    pub label: String,
    #[help]
    pub help: Option<String>,
}

fn error(text: &str, at: usize, len: usize, message: &str, label: &str, help: Option<String>) -> GateError {
    GateError {
        text: text.to_string(),
        message: message.to_string(),
        src: NamedSource::new("--fail-if", text.to_string()),
        span: (at.min(text.len()), len).into(),
        label: label.to_string(),
        help,
    }
}

const SYNTAX: &str = "write METRIC [('ARM')] OP NUMBER[%], e.g. `infrastructure > 5%` or `pass_rate('arm a') < 0.40`";

/// Reads one expression.
///
/// # Errors
/// A malformed expression, with the span of what is wrong.
pub fn parse(text: &str) -> Result<Threshold, GateError> {
    let b = text.as_bytes();
    let mut i = 0;
    let skip = |i: &mut usize| {
        while *i < b.len() && b[*i].is_ascii_whitespace() {
            *i += 1;
        }
    };
    skip(&mut i);
    let start = i;
    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'-') {
        i += 1;
    }
    if i == start {
        return Err(error(text, start, 1, "expected a metric name", "a metric starts here", Some(SYNTAX.into())));
    }
    let metric = text[start..i].to_string();
    skip(&mut i);
    let mut arm = None;
    if i < b.len() && b[i] == b'(' {
        let open = i;
        i += 1;
        skip(&mut i);
        let quote = b.get(i).copied();
        if !matches!(quote, Some(b'\'' | b'"')) {
            return Err(error(text, i, 1, "expected a quoted arm name", "quote the arm: ('arm a')", Some(SYNTAX.into())));
        }
        let q = i;
        i += 1;
        let name_start = i;
        while i < b.len() && Some(b[i]) != quote {
            i += 1;
        }
        if i >= b.len() {
            return Err(error(text, q, text.len() - q, "the arm name is not closed", "this quote is never closed", None));
        }
        arm = Some(text[name_start..i].to_string());
        i += 1;
        skip(&mut i);
        if b.get(i) != Some(&b')') {
            return Err(error(text, open, i + 1 - open, "expected `)` after the arm name", "this parenthesis is not closed", None));
        }
        i += 1;
        skip(&mut i);
    }
    let op_at = i;
    let two = text.get(i..i + 2);
    let (op, len) = match (two, b.get(i)) {
        (Some(">="), _) => (Op::Ge, 2),
        (Some("<="), _) => (Op::Le, 2),
        (Some("=="), _) => (Op::Eq, 2),
        (Some("!="), _) => (Op::Ne, 2),
        (_, Some(b'>')) => (Op::Gt, 1),
        (_, Some(b'<')) => (Op::Lt, 1),
        _ => {
            return Err(error(
                text,
                op_at,
                1,
                "expected a comparison (>, >=, <, <=, ==, !=)",
                "a comparison goes here",
                Some(SYNTAX.into()),
            ));
        }
    };
    i += len;
    skip(&mut i);
    let num_start = i;
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
        i += 1;
    }
    let Ok(mut value) = text[num_start..i].parse::<f64>() else {
        return Err(error(text, num_start, (i - num_start).max(1), "expected a number", "a number (0.40, or 40%) goes here", None));
    };
    let num_end = i;
    skip(&mut i);
    if b.get(i) == Some(&b'%') {
        value /= 100.0;
        i += 1;
    } else if value > 1.0 {
        return Err(error(
            text,
            num_start,
            num_end - num_start,
            "a bare number is a fraction and this one is above 1",
            "a fraction or a percentage?",
            Some(format!("write {value}% for a percentage, or a fraction such as {}", value / 100.0)),
        ));
    }
    skip(&mut i);
    if i < b.len() {
        return Err(error(
            text,
            i,
            text.len() - i,
            "unexpected text after the threshold",
            "not part of the threshold",
            Some(SYNTAX.into()),
        ));
    }
    Ok(Threshold { text: text.trim().to_string(), metric, arm, op, value })
}

/// One threshold applied to one arm.
#[derive(Debug, Clone, Serialize)]
pub struct GateCheck {
    pub threshold: String,
    pub arm: String,
    pub value: f64,
    /// The threshold's condition holds: the gate fails.
    pub crossed: bool,
}

/// The metrics a study can be gated on, for the diagnostic of an unknown one.
fn metric_names(rules: &Rules) -> Vec<String> {
    let mut v: Vec<String> = ["pass_rate", "passed", "failed", "infrastructure", "unknown"].iter().map(ToString::to_string).collect();
    v.extend(rules.taxonomy.precedence.iter().filter(|c| !v.contains(c)).cloned().collect::<Vec<_>>());
    v
}

/// Applies the thresholds to every arm they name (every arm when they name none).
///
/// # Errors
/// A metric or an arm the study does not have.
pub fn check(thresholds: &[Threshold], report: &Report, rules: &Rules) -> Result<Vec<GateCheck>, GateError> {
    let mut out = Vec::new();
    let flags: std::collections::BTreeSet<&str> = report.arms.iter().flat_map(|a| a.flags.keys().map(String::as_str)).collect();
    let known = metric_names(rules);
    for t in thresholds {
        let is_flag = flags.contains(t.metric.as_str()) || crate::report::tables::WORKED_SUBFLAGS.contains(&t.metric.as_str());
        if !known.contains(&t.metric) && !is_flag {
            let at = t.text.find(&t.metric).unwrap_or(0);
            return Err(error(
                &t.text,
                at,
                t.metric.len(),
                &format!("`{}` is not a metric of this study", t.metric),
                "unknown metric",
                Some(format!("metrics: {}, or a flag the study's verdicts carry", known.join(", "))),
            ));
        }
        let arms: Vec<usize> = match &t.arm {
            Some(name) => match report.arms.iter().position(|a| &a.arm == name) {
                Some(i) => vec![i],
                None => {
                    let at = t.text.find(name.as_str()).unwrap_or(0);
                    let names: Vec<&str> = report.arms.iter().map(|a| a.arm.as_str()).collect();
                    return Err(error(
                        &t.text,
                        at,
                        name.len(),
                        &format!("the study has no arm `{name}`"),
                        "unknown arm",
                        Some(format!("arms: {}", names.join(", "))),
                    ));
                }
            },
            None => (0..report.arms.len()).collect(),
        };
        for i in arms {
            let a = &report.arms[i];
            let share = |k: u64| k as f64 / a.trials.max(1) as f64;
            let value = match t.metric.as_str() {
                "pass_rate" => a.pass_at_1.estimate,
                "passed" => share(a.passed),
                "failed" => share(a.failed),
                "infrastructure" => share(a.infrastructure),
                "unknown" => share(a.unknown),
                m if known.iter().any(|k| k == m) => share(a.by_primary.get(m).copied().unwrap_or(0)),
                m => share(a.flags.get(m).copied().unwrap_or(0)),
            };
            out.push(GateCheck { threshold: t.text.clone(), arm: a.arm.clone(), value, crossed: t.op.holds(value, t.value) });
        }
    }
    Ok(out)
}

/// The checks as JUnit XML: one testcase per threshold and arm; a crossed one fails.
#[must_use]
pub fn junit(title: &str, checks: &[GateCheck]) -> String {
    use crate::predict::junit::escape;
    use std::fmt::Write as _;
    let failures = checks.iter().filter(|c| c.crossed).count();
    let counts = format!("tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\"", checks.len());
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(x, "<testsuites name=\"coroner report --fail-if\" {counts}>");
    let _ = writeln!(x, "  <testsuite name=\"{}\" {counts}>", escape(title, true));
    for c in checks {
        let name = format!("{} [{}]", c.threshold, c.arm);
        let _ = writeln!(x, "    <testcase name=\"{}\" classname=\"coroner.thresholds\">", escape(&name, true));
        let observed = format!("{}: {:.4} ({:.1}%)", c.arm, c.value, 100.0 * c.value);
        if c.crossed {
            let _ = writeln!(
                x,
                "      <failure message=\"{}\">{}</failure>",
                escape(&format!("crossed: {}", c.threshold), true),
                escape(&observed, false)
            );
        } else {
            let _ = writeln!(x, "      <system-out>{}</system-out>", escape(&observed, false));
        }
        let _ = writeln!(x, "    </testcase>");
    }
    x.push_str("  </testsuite>\n</testsuites>\n");
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_documented_forms() {
        let t = parse("infrastructure > 5%").unwrap();
        assert_eq!((t.metric.as_str(), t.arm, t.op), ("infrastructure", None, Op::Gt));
        assert!((t.value - 0.05).abs() < 1e-12);
        let t = parse("pass_rate('arm a') < 0.40").unwrap();
        assert_eq!((t.metric.as_str(), t.arm.as_deref(), t.op, t.value), ("pass_rate", Some("arm a"), Op::Lt, 0.40));
        let t = parse(" unclassified(\"mini, think\")>=3 % ").unwrap();
        assert_eq!((t.arm.as_deref(), t.op), (Some("mini, think"), Op::Ge));
        assert!((t.value - 0.03).abs() < 1e-12);
    }

    #[test]
    fn mistakes_point_at_what_is_wrong() {
        for (text, at, word) in [
            ("infrastructure 5%", 15, "comparison"),
            ("infrastructure > 5", 17, "above 1"),
            ("pass_rate(arm) < 0.4", 10, "quoted"),
            ("pass_rate('arm) < 0.4", 10, "not closed"),
            ("pass_rate > 0.4 and more", 16, "unexpected"),
            ("> 5%", 0, "metric"),
            ("failed > x", 9, "number"),
        ] {
            let e = parse(text).unwrap_err();
            assert_eq!(e.span.offset(), at, "{text}: {e}");
            assert!(e.to_string().contains(word), "{text}: {e}");
        }
    }
}
