//! The literal a pattern cannot match without: a cheap test that rules a long text out before
//! the regex runs.
//!
//! The regex crate prefilters on a pattern's *leading* literals. A phrase like
//! `(?i)\b(?:command|execution|process) (?:has )?timed out` leads with common words, so over a
//! long tool output its prefilter stops at every "command" and the automaton runs from there;
//! what the phrase cannot do without is the rare "timed out" in its middle. A gate built from
//! such inner literals, searched ASCII-case-insensitively, passes every text the patterns could
//! match (it is a necessary condition, and case-insensitive search matches more, never less),
//! and most texts fail it at memchr speed.

use regex_syntax::hir::{Class, Hir, HirKind};

/// Shortest literal worth a gate: shorter ones occur everywhere.
const MIN_LEN: usize = 4;

/// Literals (ASCII, lowercased) one of which every match of `pattern` contains, each at least
/// [`MIN_LEN`] bytes: one for most patterns, one per branch for an alternation. `None` when a
/// match can do without any such literal, or the pattern does not parse.
#[must_use]
pub fn literals(pattern: &str) -> Option<Vec<String>> {
    let hir = regex_syntax::ParserBuilder::new().build().parse(pattern).ok()?;
    needs(&hir)
}

/// The literal of [`literals`] where the pattern needs one in particular (no alternation of them).
#[must_use]
pub fn literal(pattern: &str) -> Option<String> {
    literals(pattern).filter(|v| v.len() == 1).and_then(|mut v| v.pop())
}

/// A gate for a set of patterns: the literals each needs, all in one test; `None` when any
/// pattern needs none.
#[must_use]
pub fn gate<S: AsRef<str>>(patterns: &[S]) -> Option<regex::Regex> {
    let mut lits: Vec<String> = Vec::new();
    for p in patterns {
        lits.extend(literals(p.as_ref())?);
    }
    if lits.is_empty() {
        return None;
    }
    lits.sort();
    lits.dedup();
    let alternation = lits.iter().map(|l| regex_syntax::escape(l)).collect::<Vec<_>>().join("|");
    regex::Regex::new(&format!("(?i-u:{alternation})")).ok()
}

/// The one ASCII character a node matches, lowercased, when it matches exactly one character
/// in either case and nothing else (a Unicode case class like `[Kk\u{212A}]` is not one).
fn one_char(hir: &Hir) -> Option<char> {
    let HirKind::Class(class) = hir.kind() else { return None };
    let ranges: Vec<(char, char)> = match class {
        Class::Unicode(c) => c.ranges().iter().map(|r| (r.start(), r.end())).collect(),
        Class::Bytes(c) => c.ranges().iter().map(|r| (char::from(r.start()), char::from(r.end()))).collect(),
    };
    match ranges.as_slice() {
        [(a, b)] if a == b && a.is_ascii() => Some(a.to_ascii_lowercase()),
        [(a, b), (c, d)] if a == b && c == d && a.is_ascii_uppercase() && a.to_ascii_lowercase() == *c => Some(*c),
        _ => None,
    }
}

/// How good a set is as a gate: its shortest literal (longer is rarer), then fewer literals.
fn quality(set: &[String]) -> (usize, std::cmp::Reverse<usize>) {
    (set.iter().map(String::len).min().unwrap_or(0), std::cmp::Reverse(set.len()))
}

fn better(a: Option<Vec<String>>, b: Option<Vec<String>>) -> Option<Vec<String>> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if quality(&b) > quality(&a) { b } else { a }),
        (a, b) => a.or(b),
    }
}

/// A set of literals one of which every match of `hir` contains.
fn needs(hir: &Hir) -> Option<Vec<String>> {
    let long = |s: String| (s.len() >= MIN_LEN).then(|| vec![s]);
    match hir.kind() {
        HirKind::Literal(l) => {
            l.0.split(|b| !b.is_ascii())
                .map(|part| String::from_utf8_lossy(part).to_ascii_lowercase())
                .max_by_key(String::len)
                .and_then(long)
        }
        HirKind::Capture(c) => needs(&c.sub),
        HirKind::Repetition(r) if r.min >= 1 => needs(&r.sub),
        HirKind::Concat(children) => {
            let mut best = None;
            let mut run = String::new();
            for child in children {
                if let Some(c) = one_char(child) {
                    run.push(c);
                    continue;
                }
                if let HirKind::Literal(l) = child.kind()
                    && l.0.is_ascii()
                {
                    run.push_str(&String::from_utf8_lossy(&l.0).to_ascii_lowercase());
                    continue;
                }
                best = better(best, long(std::mem::take(&mut run)));
                best = better(best, needs(child));
            }
            better(best, long(run))
        }
        // Every branch needs one of its own.
        HirKind::Alternation(branches) => {
            let mut all = Vec::new();
            for b in branches {
                all.extend(needs(b)?);
            }
            Some(all)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rare_middle_of_a_phrase_is_its_literal() {
        assert_eq!(literal(r"(?i)\b(?:command|execution|process) (?:has )?timed out\b").as_deref(), Some("timed out"));
        assert_eq!(literal(r"(?i)\btimed out after \d+").as_deref(), Some("timed out after "));
        assert_eq!(literal(r"(?i)\bTimeoutExpired\b").as_deref(), Some("timeoutexpired"));
        assert_eq!(literal(r"Unknown tool '(?P<name>[^']*)'").as_deref(), Some("unknown tool '"));
        assert_eq!(literal(r"(?:ab)+cdef").as_deref(), Some("cdef"));
    }

    #[test]
    fn no_literal_where_a_match_can_do_without_one() {
        assert_eq!(literal(r"(?i)no such tool|unknown tool"), None, "an alternation needs no one literal");
        assert_eq!(
            literals(r"(?i)no such tool|\bunknown tool\b").unwrap(),
            ["uch tool", "nown tool"],
            "but one of its branches' literals (`s` and `k` fold to non-ASCII letters too)"
        );
        assert_eq!(literals(r"(?i)no such tool|\w+"), None, "a branch that needs none");
        assert_eq!(literal(r"(?:timed out)?\d+"), None, "an optional part");
        assert_eq!(literal(r"\w+ed"), None, "too short");
        // Unicode case folding: `s` also matches `ſ` and `k` the Kelvin sign, so neither may join a run.
        assert_eq!(literal(r"(?i)tasks done").as_deref(), Some(" done"));
    }

    #[test]
    fn the_gate_passes_every_text_a_pattern_matches() {
        let patterns = [r"(?i)\b(?:command|execution|process) (?:has )?timed out\b", r"(?i)\bTimeoutExpired\b", r"(?i)\bab\b|cd"];
        assert!(gate(&patterns).is_none(), "one pattern without a literal: no gate");
        assert_eq!(literal(r"(?i)kelvin").as_deref(), Some("elvin"), "`k` also matches the Kelvin sign: it is left out");
        let patterns = &patterns[..2];
        let g = gate(patterns).unwrap();
        let res: Vec<regex::Regex> = patterns.iter().map(|p| regex::Regex::new(p).unwrap()).collect();
        for text in ["The Command TIMED OUT", "raise TimeoutExpired(cmd)", "process has timed out", "a command that ran", ""] {
            if res.iter().any(|r| r.is_match(text)) {
                assert!(g.is_match(text), "{text}");
            }
        }
        assert!(!g.is_match("a command that ran"));
    }
}
