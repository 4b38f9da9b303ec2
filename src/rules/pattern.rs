//! Patterns from the rules: checked when the rules load, compiled when first matched.
//!
//! A process loads every profile, but a run reads one or two harnesses. Compiling every
//! pattern of every profile up front was nine tenths of a `coroner classify` with nothing to
//! read (~70 ms of CPU) and a few percent of a 500-trajectory run. The syntax is still checked
//! at load, by the parser `regex` itself uses and with its error text, so a bad pattern is
//! still reported there, at its line.

use std::sync::{Arc, LazyLock, OnceLock};

use regex::Regex;

/// A checked pattern, compiled on first use and shared by every clone.
#[derive(Clone)]
pub struct Pattern(Arc<Inner>);

struct Inner {
    source: String,
    /// `None` when it did not compile (only the size limit can refuse a checked pattern).
    re: OnceLock<Option<Regex>>,
    /// A literal every match contains, as a test (`super::required`), built on first use.
    gate: OnceLock<Option<Regex>>,
}

impl std::fmt::Debug for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Pattern").field(&self.0.source).finish()
    }
}

impl Pattern {
    /// Checks `source`'s syntax; compiling waits for the first match.
    ///
    /// # Errors
    /// The error `Regex::new` gives for a pattern that does not parse.
    pub fn new(source: &str) -> Result<Self, regex::Error> {
        regex_syntax::ParserBuilder::new().build().parse(source).map_err(|e| regex::Error::Syntax(e.to_string()))?;
        Ok(Self::unchecked(source))
    }

    /// A pattern built from checked ones (an alternation of them), not checked again.
    #[must_use]
    pub fn unchecked(source: &str) -> Self {
        Self(Arc::new(Inner { source: source.to_string(), re: OnceLock::new(), gate: OnceLock::new() }))
    }

    /// False when `text` lacks a literal every match needs: a search over a long text that can
    /// find nothing is skipped.
    #[must_use]
    pub fn may_match(&self, text: &str) -> bool {
        let gate = self.0.gate.get_or_init(|| super::required::gate(&[self.0.source.as_str()]));
        gate.as_ref().is_none_or(|g| g.is_match(text))
    }

    /// The pattern as written.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0.source
    }

    /// The compiled regex, or `None` when it is too big to compile.
    #[must_use]
    pub fn try_get(&self) -> Option<&Regex> {
        self.0.re.get_or_init(|| Regex::new(&self.0.source).ok()).as_ref()
    }

    /// The compiled regex; one that matches nothing, with a warning on stderr the first time,
    /// when the pattern is too big to compile.
    #[must_use]
    pub fn get(&self) -> &Regex {
        static NOTHING: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[^\s\S]").expect("an empty class compiles"));
        self.try_get().unwrap_or_else(|| {
            static WARNED: OnceLock<()> = OnceLock::new();
            WARNED.get_or_init(|| {
                eprintln!(
                    "coroner: warning: the rule pattern `{}` is too big to compile (the regex size limit); it matches nothing",
                    self.0.source.chars().take(80).collect::<String>()
                );
            });
            &NOTHING
        })
    }
}

impl std::ops::Deref for Pattern {
    type Target = Regex;
    fn deref(&self) -> &Regex {
        self.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_pattern_is_refused_at_once_with_the_regex_crates_words() {
        for bad in ["(", "a{2,1}", r"\p{NoSuchClass}", "[z-a]", "(?P<n>a)(?P<n>b)"] {
            let ours = Pattern::new(bad).expect_err(bad).to_string();
            let theirs = Regex::new(bad).expect_err(bad).to_string();
            assert_eq!(ours, theirs, "{bad}");
        }
    }

    #[test]
    fn a_pattern_matches_as_its_regex_does_once_compiled() {
        let p = Pattern::new(r"(?i)exit code (?P<code>\d+)").unwrap();
        assert!(p.0.re.get().is_none(), "not compiled before its first use");
        let c = p.captures("Exit code 137").unwrap();
        assert_eq!(&c["code"], "137");
        assert!(p.0.re.get().is_some());
        assert_eq!(p.as_str(), r"(?i)exit code (?P<code>\d+)");
        let shared = p.clone();
        assert!(std::ptr::eq(shared.get(), p.get()), "clones share one compiled regex");
    }

    #[test]
    fn a_pattern_too_big_to_compile_matches_nothing() {
        // Checked (it parses) but over the default size limit once compiled.
        let huge = Pattern::new(r"\w{5000}").unwrap();
        assert!(Regex::new(r"\w{5000}").is_err(), "the regex crate refuses it");
        assert!(huge.try_get().is_none());
        assert!(!huge.is_match(&"a".repeat(6000)));
    }
}
