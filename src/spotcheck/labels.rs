//! The labels a person may give: the taxonomy's classes in precedence order, and `passed` for
//! a trajectory that did not fail. Spelling is forgiven (case, spaces, hyphens), anything else
//! is named back to the person, never guessed.

use std::path::Path;

use super::SpotcheckError;
use crate::rules::FLAGS;

/// The label for a trajectory that did not fail (the machine has no class for it).
pub const PASSED: &str = "passed";

/// What a label given by a person is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabelKind {
    /// A class of the taxonomy (normalized id).
    Class(String),
    Passed,
    /// A sub-flag: part of the rules, but not a class a trajectory is labelled with.
    Flag(String),
    /// Neither; with the nearest class when one is close.
    Unknown {
        suggestion: Option<String>,
    },
}

/// Lower case, trimmed, with spaces and hyphens as underscores: `Worked then wrong` and
/// `worked-then-wrong` are `worked_then_wrong`.
#[must_use]
pub fn normalize(label: &str) -> String {
    let mut out = String::with_capacity(label.len());
    for c in label.trim().chars() {
        let c = if c == ' ' || c == '-' { '_' } else { c.to_ascii_lowercase() };
        if c == '_' && out.ends_with('_') {
            continue;
        }
        out.push(c);
    }
    out
}

/// The classes in force (precedence order) and how to read a label against them.
#[derive(Debug, Clone)]
pub struct Vocabulary {
    pub classes: Vec<String>,
}

impl Vocabulary {
    #[must_use]
    pub fn new(precedence: &[String]) -> Self {
        Self { classes: precedence.to_vec() }
    }

    /// Every label in report order: the classes, then `passed`.
    #[must_use]
    pub fn order(&self) -> Vec<String> {
        self.classes.iter().cloned().chain([PASSED.to_string()]).collect()
    }

    #[must_use]
    pub fn kind(&self, label: &str) -> LabelKind {
        let n = normalize(label);
        if n == PASSED {
            return LabelKind::Passed;
        }
        if self.classes.contains(&n) {
            return LabelKind::Class(n);
        }
        if FLAGS.contains(&n.as_str()) {
            return LabelKind::Flag(n);
        }
        let suggestion = self
            .order()
            .into_iter()
            .map(|c| (edit_distance(&n, &c), c))
            .filter(|(d, c)| *d <= 3.max(c.len() / 4))
            .min_by_key(|(d, _)| *d)
            .map(|(_, c)| c);
        LabelKind::Unknown { suggestion }
    }
}

/// A CSV's normalized header names, and its rows with the line each starts on.
pub type Rows = (Vec<String>, Vec<(u64, csv::StringRecord)>);

/// A labels CSV: its header (normalized names) and its non-blank rows, each with the line it
/// starts on (the header is line 1), counted from the bytes so CRLF files and quoted
/// multi-line cells number rows as an editor does.
///
/// # Errors
/// When the file cannot be read or is not CSV.
pub fn read_rows(path: &Path) -> Result<Rows, SpotcheckError> {
    let shown = crate::util::display_path(path);
    let bytes = std::fs::read(path).map_err(|e| SpotcheckError::read(&shown, &e))?;
    let mut r = csv::ReaderBuilder::new().flexible(true).from_reader(bytes.as_slice());
    let headers: Vec<String> = r.headers().map_err(|e| SpotcheckError::read(&shown, &e))?.iter().map(normalize).collect();
    let mut rows = Vec::new();
    let (mut line, mut counted) = (1u64, 0usize);
    for rec in r.records() {
        let rec = rec.map_err(|e| SpotcheckError::read(&shown, &e))?;
        let mut at = usize::try_from(rec.position().map_or(0, csv::Position::byte)).unwrap_or(usize::MAX).min(bytes.len());
        // With CRLF the reader places a record at the `\n` that ends the previous one.
        while at < bytes.len() && matches!(bytes[at], b'\r' | b'\n') {
            at += 1;
        }
        line += memchr::memchr_iter(b'\n', &bytes[counted..at]).count() as u64;
        counted = at;
        if rec.iter().all(|c| c.trim().is_empty()) {
            continue;
        }
        rows.push((line, rec));
    }
    Ok((headers, rows))
}

/// Levenshtein distance over chars (labels are short).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_read_forgivingly_and_unknown_ones_named() {
        let v = Vocabulary::new(&["budget_exhausted".into(), "worked_then_wrong".into()]);
        assert_eq!(v.kind(" Worked then  wrong "), LabelKind::Class("worked_then_wrong".into()));
        assert_eq!(v.kind("budget-exhausted"), LabelKind::Class("budget_exhausted".into()));
        assert_eq!(v.kind("PASSED"), LabelKind::Passed);
        assert_eq!(v.kind("looping"), LabelKind::Flag("looping".into()));
        assert_eq!(v.kind("worked_then_wong"), LabelKind::Unknown { suggestion: Some("worked_then_wrong".into()) });
        assert_eq!(v.kind("timeout"), LabelKind::Unknown { suggestion: None });
    }
}
