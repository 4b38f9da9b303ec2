//! Tests that could not run, as the agent's own pytest runs show them: pytest's error sections
//! (`____ ERROR collecting F ____`, `____ ERROR at setup of C.m ____`) and its short-summary
//! lines (`ERROR F - DeprecationWarning: ...`). A benchmark whose test file cannot even be
//! collected in its image fails every agent the same way; what tells that apart from an agent
//! that broke the import is the traceback, which names the file at fault.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

/// A test file, or a test class of one, that errored before any test body ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken<'t> {
    /// The test file (`F` of `ERROR collecting F`, of a summary line).
    pub file: &'t str,
    /// The class, when only a class errored: every one of its tests shown errored at setup (at
    /// least two), and none of them ran in the same output.
    pub class: Option<&'t str>,
    /// A line as printed, which a reader finds in the output: the excerpt.
    pub header: &'t str,
    /// The error's text, traceback included when the output shows it.
    pub text: &'t str,
    /// What was raised, when shown (`E   ...`, or the summary line's message).
    pub raised: Option<&'t str>,
}

static HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?m)^_{2,} (ERROR collecting (\S+)|ERROR at setup of ([A-Za-z_][A-Za-z0-9_]*)\.[A-Za-z_][A-Za-z0-9_]*(?:\[[^\n]*\])?) _{2,}\r?$",
    )
    .expect("valid regex")
});
/// `ERROR F - msg` (the file), `ERROR F::C::m[ - msg]` (one test of a class).
static SUMMARY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^ERROR (\S+?\.py)(?:::([A-Za-z_][A-Za-z0-9_]*)::([A-Za-z_][A-Za-z0-9_]*)(?:\[\S*\])?)?(?: - (.+?))?\r?$")
        .expect("valid regex")
});
/// Where a section ends: the next section, or one of pytest's `====` banners.
static END: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?m)^(?:_{2,} \S|={3,})").expect("valid regex"));

/// A section's text and the first `E   ` line in it.
fn section(output: &str, from: usize, after: usize) -> (&str, Option<&str>) {
    let end = END.find(&output[after..]).map_or(output.len(), |m| after + m.start());
    let text = &output[from..end];
    let raised = text.lines().map(str::trim_start).find(|l| l.starts_with("E   ")).map(|l| l.trim_start_matches('E').trim());
    (text, raised)
}

/// Every test file, and every test class, that errored before its tests ran in one output.
#[must_use]
pub fn broken(output: &str) -> Vec<Broken<'_>> {
    // Cheap refusal first: most outputs hold no pytest error at all.
    if !output.contains("ERROR") {
        return Vec::new();
    }
    let mut out = Vec::new();
    // Setup sections by class, for the traceback of a class that errored.
    let mut setups: Vec<(&str, &str, &str, Option<&str>)> = Vec::new();
    for c in HEADER.captures_iter(output) {
        let all = c.get(0).expect("match");
        let (text, raised) = section(output, all.start(), all.end());
        let header = c.get(1).expect("header").as_str();
        match (c.get(2), c.get(3)) {
            (Some(file), _) => out.push(Broken { file: file.as_str(), class: None, header, text, raised }),
            (None, Some(class)) => setups.push((class.as_str(), header, text, raised)),
            _ => {}
        }
    }
    // (file, class) -> (tests shown erroring, first summary line)
    let mut classes: std::collections::BTreeMap<(&str, &str), (std::collections::BTreeSet<&str>, &str)> = std::collections::BTreeMap::new();
    for c in SUMMARY.captures_iter(output) {
        let line = c.get(0).expect("match").as_str().trim_end();
        let file = c.get(1).expect("file").as_str();
        match (c.get(2), c.get(3)) {
            (Some(class), Some(test)) => {
                classes.entry((file, class.as_str())).or_insert_with(|| (std::collections::BTreeSet::new(), line)).0.insert(test.as_str());
            }
            _ => out.push(Broken { file, class: None, header: line, text: line, raised: c.get(4).map(|m| m.as_str()) }),
        }
    }
    let here = ran(output);
    for ((file, class), (tests, line)) in classes {
        if tests.len() < 2 || here.contains(&format!("{file}::{class}")) {
            continue;
        }
        let (header, text, raised) = setups.iter().find(|(c, ..)| *c == class).map_or((line, line, None), |(_, h, t, r)| (*h, *t, *r));
        out.push(Broken { file, class: Some(class), header, text, raised });
    }
    // One error per file or class (pytest prints a collection error twice: section and summary).
    let mut units = std::collections::HashSet::new();
    out.retain(|b| units.insert((b.file, b.class)));
    out
}

/// The test files, and the `file::Class` units, whose tests ran in one output (a line of a
/// test id with `PASSED` or `FAILED`): one pass, so a run's errors are checked against every
/// later run in time linear in the outputs.
#[must_use]
pub fn ran(output: &str) -> std::collections::HashSet<String> {
    let mut units = std::collections::HashSet::new();
    if !output.contains("PASSED") && !output.contains("FAILED") {
        return units;
    }
    for l in output.lines() {
        let l = l.trim_end();
        let id = if let Some(rest) = l.strip_prefix("FAILED ").or_else(|| l.strip_prefix("PASSED ")) {
            rest.split_whitespace().next()
        } else if l.ends_with("PASSED") || l.ends_with("FAILED") {
            l.split_whitespace().next()
        } else {
            None
        };
        let Some(id) = id.filter(|i| i.contains("::")) else { continue };
        let mut parts = id.split("::");
        let file = parts.next().unwrap_or("");
        units.insert(file.to_string());
        if let (Some(class), Some(_)) = (parts.next(), parts.next()) {
            units.insert(format!("{file}::{class}"));
        }
    }
    units
}

/// Whether `b` is among the units a later output ran.
#[must_use]
pub fn ran_later(b: &Broken<'_>, ran: &std::collections::HashSet<String>) -> bool {
    match b.class {
        Some(c) => ran.contains(&format!("{}::{c}", b.file)),
        None => ran.contains(b.file),
    }
}

/// A failure section's header (`____ C.m[p] ____`): one word, so not `ERROR collecting F`.
static FAILED_SECTION: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?m)^_{3,} (\S+) _{3,}\r?$").expect("valid regex"));

/// The tests one pytest output shows failing, by [`test_name`]: from its failure sections and
/// from its `FAILED id` lines, whichever the output kept (an output cut to its head holds only
/// the first sections, one cut to its tail only the summary).
#[must_use]
pub fn failed(output: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    if !output.contains("FAILED") && !output.contains("___") {
        return out;
    }
    for c in FAILED_SECTION.captures_iter(output) {
        let name = c.get(1).expect("name").as_str();
        if name.starts_with(|ch: char| ch.is_ascii_alphabetic() || ch == '_') {
            out.insert(test_name(name));
        }
    }
    for l in output.lines() {
        let l = l.trim_end();
        // `FAILED id - message` (the id may hold spaces in its parameters), or a verbose
        // `id FAILED` line, which pytest ends with its progress (`[ 50%]`).
        let id = match l.strip_prefix("FAILED ") {
            Some(rest) => rest.split(" - ").next().map(str::trim),
            None => verbose_failed(l),
        };
        if let Some(id) = id.filter(|i| i.contains("::")) {
            out.insert(test_name(id));
        }
    }
    out
}

/// The id of a verbose `id FAILED` line, which pytest ends with its progress (`[ 50%]`).
fn verbose_failed(line: &str) -> Option<&str> {
    let line = match line.rfind(" [") {
        Some(i) if line.ends_with("%]") => line[..i].trim_end(),
        _ => line,
    };
    line.strip_suffix(" FAILED").and_then(|rest| rest.split_whitespace().next())
}

/// The text of test `name`'s failure in one pytest output (its section, else its `FAILED`
/// summary line), in [`test_name`] form.
#[must_use]
pub fn failure_of<'o>(output: &'o str, name: &str) -> Option<&'o str> {
    for c in FAILED_SECTION.captures_iter(output) {
        let all = c.get(0).expect("match");
        if test_name(c.get(1).expect("name").as_str()) == name {
            return Some(section(output, all.start(), all.end()).0);
        }
    }
    output.lines().find(|l| l.strip_prefix("FAILED ").and_then(|r| r.split(" - ").next()).is_some_and(|id| test_name(id.trim()) == name))
}

/// A test's name within its file as pytest heads its failure section: `a/t.py::C::m[p]`,
/// `C::m[p]` and `C.m[p]` are all `C.m[p]` (the parameters as written).
#[must_use]
pub fn test_name(id: &str) -> String {
    let id = test_id(id);
    let (name, params) = id.find('[').map_or((id, ""), |i| id.split_at(i));
    let name = if name.contains(".py::") { name.split_once("::").map_or(name, |(_, n)| n) } else { name };
    format!("{}{params}", name.replace("::", "."))
}

/// The pytest id of a verdict's test (`FAIL_TO_PASS: a/t.py::C::m` → `a/t.py::C::m`).
#[must_use]
pub fn test_id(name: &str) -> &str {
    match name.find(": ") {
        Some(i) if !name[..i].contains("::") => &name[i + 2..],
        _ => name,
    }
}

/// Whether `b` covers the test `id` (`F::C::m`): its file errored, or its class did.
#[must_use]
pub fn covers(b: &Broken<'_>, id: &str) -> bool {
    let mut parts = id.split("::");
    let file = parts.next().unwrap_or("");
    let class = parts.next().filter(|_| id.matches("::").count() >= 2);
    same_path(b.file, file) && (b.class.is_none() || b.class == class)
}

/// Two spellings of one path: equal after `./`, or one ending in `/` + the other.
fn same_path(a: &str, b: &str) -> bool {
    let (a, b) = (a.trim_start_matches("./"), b.trim_start_matches("./"));
    !a.is_empty() && !b.is_empty() && (a == b || a.ends_with(&format!("/{b}")) || b.ends_with(&format!("/{a}")))
}

/// Whether a traceback names `path` (as written by the agent, relative or absolute): by its
/// last two components, so `/testbed/pkg/m.py` and `pkg/m.py` are one file and
/// `pkg/tests/test_m.py` is not `pkg/m.py`; or, for Python, by its module name (`pkg.m`), which
/// is all an `ImportError` or `AttributeError` shows.
#[must_use]
pub fn names(text: &str, path: &str) -> bool {
    let comps: Vec<&str> = path.trim_end_matches('/').rsplit('/').take(2).collect();
    let tail = match comps.as_slice() {
        [f, d] if !d.is_empty() && *d != "." => format!("{d}/{f}"),
        [f, ..] => (*f).to_string(),
        [] => return false,
    };
    let bounded = |needle: &str| {
        text.match_indices(needle)
            .any(|(i, _)| i == 0 || matches!(text.as_bytes()[i - 1], b'/' | b' ' | b'"' | b'\'' | b'\n' | b'(' | b'.' | b':'))
    };
    if bounded(&tail) {
        return true;
    }
    // `pkg/core.py` as `pkg.core`: the dotted name of the module, from its last two components.
    let module = tail.strip_suffix(".py").map(|m| m.replace('/', "."));
    module.is_some_and(|m| m.contains('.') && bounded(&m))
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLLECT: &str = "collected 0 items / 1 error\n\n==================================== ERRORS ====================================\n____________ ERROR collecting astropy/units/tests/test_quantity.py _____________\nastropy/units/tests/test_quantity.py:29: in <module>\n    from distutils.version import LooseVersion\nE   DeprecationWarning: distutils Version classes are deprecated.\n=========================== short test summary info ============================\nERROR astropy/units/tests/test_quantity.py - DeprecationWarning: distutils Version classes are deprecated.\n";

    #[test]
    fn failing_tests_are_named_from_sections_and_summary_lines_alike() {
        let head = "testing/test_setuponly.py ....FFF....\n=== FAILURES ===\n_______ test_show_fixtures_with_parameters[--setup-only] _______\n\nE   Failed: nomatch\n____ TestCard.test_from_bytes ____\n";
        let got = failed(head);
        assert!(got.contains("test_show_fixtures_with_parameters[--setup-only]"), "{got:?}");
        assert!(got.contains("TestCard.test_from_bytes"), "{got:?}");
        let tail = "=== short test summary info ===\nFAILED t/test_c.py::TestCard::test_from_bytes - AssertionError: x::y\nFAILED t/test_c.py::test_p[a b] - E\n";
        let got = failed(tail);
        assert_eq!(got.into_iter().collect::<Vec<_>>(), ["TestCard.test_from_bytes", "test_p[a b]"], "the id ends at ` - `");
        let verbose = "t/test_c.py::TestCard::test_from_bytes FAILED                 [ 50%]\nt/test_c.py::test_q PASSED [100%]\n";
        assert_eq!(failed(verbose).into_iter().collect::<Vec<_>>(), ["TestCard.test_from_bytes"]);
        assert_eq!(test_name("FAIL_TO_PASS: t/test_c.py::TestCard::test_from_bytes"), "TestCard.test_from_bytes");
        assert_eq!(test_name("testing/test_setuponly.py::test_show[--setup-only]"), "test_show[--setup-only]");
        assert!(failed("___ ERROR collecting t/test_c.py ___\n12 passed\n").is_empty(), "an error section is not a failing test");
        assert!(failed("all 12 passed").is_empty());
        assert!(failure_of(head, "test_show_fixtures_with_parameters[--setup-only]").is_some_and(|t| t.contains("Failed: nomatch")));
        assert!(failure_of(tail, "test_p[a b]").is_some_and(|t| t.ends_with("- E")));
        assert_eq!(failure_of(head, "test_other"), None);
    }

    #[test]
    fn collection_errors_cover_their_whole_file() {
        let b = broken(COLLECT);
        assert_eq!(b.len(), 1, "one error per file: {b:?}");
        assert_eq!(b[0].file, "astropy/units/tests/test_quantity.py");
        assert_eq!(b[0].header, "ERROR collecting astropy/units/tests/test_quantity.py");
        assert_eq!(b[0].raised, Some("DeprecationWarning: distutils Version classes are deprecated."));
        assert!(b[0].text.contains("test_quantity.py:29") && !b[0].text.contains("short test summary"));
        assert!(covers(&b[0], test_id("PASS_TO_PASS: astropy/units/tests/test_quantity.py::test_copy")));
        assert!(!covers(&b[0], "astropy/units/tests/test_units.py::test_copy"));
        assert_eq!(b[0].class, None);
    }

    const SETUP: &str = "t/test_header.py ..EEE\n____ ERROR at setup of TestHeaderFunctions.test_rename_keyword ____\n\nE   pytest.PytestRemovedIn8Warning: Support for nose tests is deprecated\n=== short test summary info ===\nERROR t/test_header.py::TestHeaderFunctions::test_rename_keyword\nERROR t/test_header.py::TestHeaderFunctions::test_totxtfile - pytest.PytestRemovedIn8Warning: nose\n";

    #[test]
    fn a_class_errors_when_several_of_its_tests_did_and_none_ran() {
        let b = broken(SETUP);
        assert_eq!(b.len(), 1, "{b:?}");
        assert_eq!((b[0].file, b[0].class), ("t/test_header.py", Some("TestHeaderFunctions")));
        assert_eq!(b[0].header, "ERROR at setup of TestHeaderFunctions.test_rename_keyword");
        assert_eq!(b[0].raised, Some("pytest.PytestRemovedIn8Warning: Support for nose tests is deprecated"));
        assert!(covers(&b[0], "t/test_header.py::TestHeaderFunctions::test_card_from_bytes"));
        assert!(!covers(&b[0], "t/test_header.py::TestRecord::test_x"), "another class");
        assert!(!covers(&b[0], "t/test_other.py::TestHeaderFunctions::test_x"), "the same class name in another file");
        assert!(!covers(&b[0], "t/test_header.py::test_shallow_copy"));
    }

    #[test]
    fn one_test_erroring_or_a_sibling_that_ran_is_no_broken_class() {
        // One fixture of one test (a network error): says nothing of the class.
        assert!(broken("ERROR t/test_c.py::TestClient::test_download - ConnectionError\n").is_empty());
        // Two errored, but a sibling ran and failed on an assertion in the same output.
        let out = "ERROR t/test_c.py::TestClient::test_a - ConnectionError\nERROR t/test_c.py::TestClient::test_b - ConnectionError\nFAILED t/test_c.py::TestClient::test_parse - assert 1 == 2\n";
        assert!(broken(out).is_empty(), "{:?}", broken(out));
    }

    #[test]
    fn a_failing_test_is_not_an_error_and_plain_text_is_nothing() {
        assert!(broken("FAILED a/t.py::test_x - assert 1 == 2\n1 failed").is_empty());
        assert!(broken("no ERROR section here").is_empty());
    }

    #[test]
    fn a_later_run_of_the_file_means_it_collects() {
        let b = &broken(COLLECT)[0];
        assert!(ran_later(b, &ran("FAILED astropy/units/tests/test_quantity.py::test_copy - assert 1 == 2")));
        assert!(ran_later(b, &ran("astropy/units/tests/test_quantity.py::test_copy PASSED")));
        assert!(!ran_later(b, &ran("ERROR astropy/units/tests/test_quantity.py - DeprecationWarning")));
        let c = &broken(SETUP)[0];
        assert!(ran_later(c, &ran("t/test_header.py::TestHeaderFunctions::test_a PASSED")));
        assert!(!ran_later(c, &ran("t/test_header.py::TestOther::test_a PASSED")));
    }

    #[test]
    fn tracebacks_name_files_by_their_last_two_components_or_their_module() {
        let tb = "/testbed/astropy/units/quantity.py:640: in __array_finalize__\n";
        assert!(names(tb, "astropy/units/quantity.py"));
        assert!(names(tb, "/testbed/astropy/units/quantity.py"));
        assert!(!names("astropy/units/tests/test_quantity.py:29: in <module>", "astropy/units/quantity.py"));
        assert!(!names(tb, "astropy/units/si.py"));
        // The character before a match must end a path: `test_m.py` is not `m.py`.
        assert!(!names("tests/test_m.py:3: in <module>", "m.py"));
        assert!(names("E   ModuleNotFoundError: No module named 'pkg.helpers'", "pkg/helpers.py"));
        assert!(names("E   AttributeError: module 'pkg.core' has no attribute 'CONST'", "src/pkg/core.py"));
    }
}
