//! Tests that could not run, as the agent's own pytest runs show them: pytest's error sections
//! (`____ ERROR collecting F ____`, `____ ERROR at setup of C.m ____`) and its short-summary
//! lines (`ERROR F - DeprecationWarning: ...`). A benchmark whose test file cannot even be
//! collected in its image fails every agent the same way; what tells that apart from an agent
//! that broke the import is the traceback, which names the file at fault.

use std::sync::LazyLock;

use regex::Regex;

/// A test file, or a test class, that errored before any test body ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken<'t> {
    /// `F` of `ERROR collecting F`, or the file of a summary line.
    pub file: Option<&'t str>,
    /// `C` of `ERROR at setup of C.m`.
    pub class: Option<&'t str>,
    /// The header line, as printed: the excerpt a reader finds in the output.
    pub header: &'t str,
    /// The section's text, traceback included (the header line alone for a summary line).
    pub text: &'t str,
    /// The first `E   ` line of the section: what was raised.
    pub raised: Option<&'t str>,
}

static HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?m)^_{2,} (ERROR collecting (\S+)|ERROR at setup of ([A-Za-z_][A-Za-z0-9_]*)\.[A-Za-z_][A-Za-z0-9_]*(?:\[[^\n]*\])?) _{2,}\r?$",
    )
    .expect("valid regex")
});
static SUMMARY: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?m)^ERROR (\S+?\.py)(?:::(\S+))? - (.+?)\r?$").expect("valid regex"));
/// Where a section ends: the next section, or one of pytest's `====` banners.
static END: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?m)^(?:_{2,} \S|={3,})").expect("valid regex"));

/// Every error section and summary line in one output.
#[must_use]
pub fn broken(output: &str) -> Vec<Broken<'_>> {
    // Cheap refusal first: most outputs hold no pytest error at all.
    if !output.contains("ERROR") {
        return Vec::new();
    }
    let mut out = Vec::new();
    for c in HEADER.captures_iter(output) {
        let all = c.get(0).expect("match");
        let rest = &output[all.end()..];
        let end = END.find(rest).map_or(output.len(), |m| all.end() + m.start());
        let text = &output[all.start()..end];
        let raised = text.lines().map(str::trim_start).find(|l| l.starts_with("E   ")).map(|l| l.trim_start_matches('E').trim());
        out.push(Broken {
            file: c.get(2).map(|m| m.as_str()),
            class: c.get(3).map(|m| m.as_str()),
            header: c.get(1).expect("header").as_str(),
            text,
            raised,
        });
    }
    for c in SUMMARY.captures_iter(output) {
        let all = c.get(0).expect("match");
        let file = c.get(1).map(|m| m.as_str());
        // `F::C::m` or `F::C` names a class; `F::m` a test, which says nothing of its siblings.
        let class = c.get(2).and_then(|m| m.as_str().split("::").next()).filter(|s| s.starts_with(char::is_uppercase));
        let whole_file = c.get(2).is_none();
        out.push(Broken {
            file: file.filter(|_| whole_file),
            class,
            header: all.as_str().trim_end(),
            text: all.as_str(),
            raised: c.get(3).map(|m| m.as_str()),
        });
    }
    out.retain(|b| b.file.is_some() || b.class.is_some());
    out
}

/// The pytest id of a verdict's test (`FAIL_TO_PASS: a/t.py::C::m` → `a/t.py::C::m`).
#[must_use]
pub fn test_id(name: &str) -> &str {
    match name.find(": ") {
        Some(i) if !name[..i].contains("::") => &name[i + 2..],
        _ => name,
    }
}

/// Whether `b` covers the test `id` (`F::C::m`): the whole file errored, or its class did.
#[must_use]
pub fn covers(b: &Broken<'_>, id: &str) -> bool {
    let mut parts = id.split("::");
    let file = parts.next().unwrap_or("");
    let class = parts.next().filter(|_| id.matches("::").count() >= 2);
    b.file.is_some_and(|f| same_path(f, file)) || (b.class.is_some() && b.class == class)
}

/// Two spellings of one path: equal after `./`, or one ending in `/` + the other.
fn same_path(a: &str, b: &str) -> bool {
    let (a, b) = (a.trim_start_matches("./"), b.trim_start_matches("./"));
    !a.is_empty() && !b.is_empty() && (a == b || a.ends_with(&format!("/{b}")) || b.ends_with(&format!("/{a}")))
}

/// Whether a traceback names `path` (as written by the agent, relative or absolute): by its
/// last two components, so `/testbed/pkg/m.py` and `pkg/m.py` are one file, and
/// `pkg/tests/test_m.py` is not `pkg/m.py`.
#[must_use]
pub fn names(text: &str, path: &str) -> bool {
    let comps: Vec<&str> = path.trim_end_matches('/').rsplit('/').take(2).collect();
    let tail = match comps.as_slice() {
        [f, d] if !d.is_empty() && *d != "." => format!("{d}/{f}"),
        [f, ..] => (*f).to_string(),
        [] => return false,
    };
    text.match_indices(&tail).any(|(i, _)| i == 0 || matches!(text.as_bytes()[i - 1], b'/' | b' ' | b'"' | b'\'' | b'\n' | b'('))
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLLECT: &str = "collected 0 items / 1 error\n\n==================================== ERRORS ====================================\n____________ ERROR collecting astropy/units/tests/test_quantity.py _____________\nastropy/units/tests/test_quantity.py:29: in <module>\n    from distutils.version import LooseVersion\nE   DeprecationWarning: distutils Version classes are deprecated.\n=========================== short test summary info ============================\nERROR astropy/units/tests/test_quantity.py - DeprecationWarning: distutils Version classes are deprecated.\n";

    #[test]
    fn collection_errors_cover_their_whole_file() {
        let b = broken(COLLECT);
        assert_eq!(b.len(), 2, "{b:?}");
        assert_eq!(b[0].file, Some("astropy/units/tests/test_quantity.py"));
        assert_eq!(b[0].header, "ERROR collecting astropy/units/tests/test_quantity.py");
        assert_eq!(b[0].raised, Some("DeprecationWarning: distutils Version classes are deprecated."));
        assert!(b[0].text.contains("test_quantity.py:29") && !b[0].text.contains("short test summary"));
        assert!(covers(&b[0], test_id("PASS_TO_PASS: astropy/units/tests/test_quantity.py::test_copy")));
        assert!(!covers(&b[0], "astropy/units/tests/test_units.py::test_copy"));
        assert_eq!(b[1].file, Some("astropy/units/tests/test_quantity.py"));
    }

    #[test]
    fn setup_errors_cover_their_class_only() {
        let out = "____ ERROR at setup of TestHeaderFunctions.test_rename_keyword ____\n\nE   pytest.PytestRemovedIn8Warning: Support for nose tests is deprecated\n_____ ERROR at setup of TestHeaderFunctions.test_x[1] _____\n";
        let b = broken(out);
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].class, Some("TestHeaderFunctions"));
        assert_eq!(b[0].file, None);
        assert!(covers(&b[0], "a/tests/test_header.py::TestHeaderFunctions::test_card_from_bytes"));
        assert!(!covers(&b[0], "a/tests/test_header.py::TestRecordValuedKeywordCards::test_x"));
        assert!(!covers(&b[0], "a/tests/test_header.py::test_shallow_copy"));
    }

    #[test]
    fn a_failing_test_is_not_an_error_and_plain_text_is_nothing() {
        assert!(broken("FAILED a/t.py::test_x - assert 1 == 2\n1 failed").is_empty());
        assert!(broken("no ERROR section here").is_empty());
        // A summary line of one test says nothing of its file.
        let b = broken("ERROR a/t.py::test_x - ValueError: boom\n");
        assert!(b.is_empty(), "{b:?}");
    }

    #[test]
    fn tracebacks_name_files_by_their_last_two_components() {
        let tb = "/testbed/astropy/units/quantity.py:640: in __array_finalize__\n";
        assert!(names(tb, "astropy/units/quantity.py"));
        assert!(names(tb, "/testbed/astropy/units/quantity.py"));
        assert!(!names("astropy/units/tests/test_quantity.py:29: in <module>", "astropy/units/quantity.py"));
        assert!(!names(tb, "astropy/units/si.py"));
    }
}
