//! pytest's console report, as a verifier's stdout keeps it (Harbor's `verifier/test-stdout.txt`):
//! which tests ran, how each ended, and what a failing one saw.
//!
//! The per-test verdict is in the verbose lines (`path::test PASSED [ 14%]`) or the `-rA`
//! summary (`FAILED path::test - message`); what the test saw is in its section under
//! `FAILURES` / `ERRORS`, the `E` lines. Those lines are what a reader checks to tell a task whose
//! inputs were broken (`assert 'x' in ''`: the file the test read was empty) from work that was
//! wrong, so they are kept with the test.

use std::sync::LazyLock;

use regex::Regex;

use crate::model::TestResult;

/// Enough of a failure's `E` lines to show what the test compared; the rest is in the file.
const MESSAGE_BYTES: usize = 1000;

static VERBOSE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\S+::[^\s\[]+(?:\[.*?\])?)\s+(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b").expect("static regex"));
static SUMMARY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S+::[^\s\[]+(?:\[.*?\])?)(?: - |$)").expect("static regex"));
/// A failure section's title, centred in underscores: as few as one each side for a long id.
static HEADER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^_+ (.+?) _+$").expect("static regex"));
static BANNER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^={3,}(?: (.*?) ={3,})?$").expect("static regex"));

/// The tests of a pytest report, in the order they were first named, with the `E` lines of each
/// failure; empty when the text holds no pytest verdicts (the verifier never got to pytest).
#[must_use]
pub fn report(text: &str) -> Vec<TestResult> {
    let mut tests: Vec<TestResult> = Vec::new();
    let mut set = |id: &str, status: &str| {
        let status = status.to_ascii_lowercase();
        match tests.iter_mut().find(|t| t.name == id) {
            Some(t) => t.status = status,
            None => tests.push(TestResult::new(id, status)),
        }
    };
    let mut sections: Vec<(String, Vec<&str>)> = Vec::new();
    let mut in_failures = false;
    // Inside a section, what the test printed (`--- Captured stdout call ---`) is not pytest's.
    let mut captured = false;
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        if let Some(c) = BANNER.captures(line) {
            let title = c.get(1).map_or("", |m| m.as_str());
            in_failures = title == "FAILURES" || title == "ERRORS";
            continue;
        }
        if in_failures {
            if let Some(c) = HEADER.captures(line) {
                sections.push((c[1].to_string(), Vec::new()));
                captured = false;
            } else if line.starts_with("---") && line.contains(" Captured ") {
                captured = true;
            } else if let Some((_, lines)) = sections.last_mut().filter(|_| !captured) {
                lines.push(line);
            }
            continue;
        }
        if let Some(c) = VERBOSE.captures(line) {
            set(&c[1], &c[2]);
        } else if let Some(c) = SUMMARY.captures(line) {
            set(&c[2], &c[1]);
        }
    }
    // A test's own failure speaks before an error in its teardown, whichever pytest printed
    // first; a section goes to a test that did not pass, where two files share the name.
    sections.sort_by_key(|(header, _)| header.starts_with("ERROR at teardown of "));
    for (header, lines) in sections {
        let name = header.trim_start_matches("ERROR at setup of ").trim_start_matches("ERROR at teardown of ");
        let Some(t) = tests.iter_mut().find(|t| t.message.is_none() && t.status != "passed" && section_name(&t.name) == name) else {
            continue;
        };
        t.message = failure_lines(lines.into_iter());
    }
    tests
}

/// The `E` lines of a failure's traceback (pytest's account of what it compared), joined and
/// clipped; `None` when there are none.
pub fn failure_lines<'a>(lines: impl Iterator<Item = &'a str>) -> Option<String> {
    let kept: Vec<&str> = lines
        .filter_map(|l| l.trim_end_matches('\r').strip_prefix('E'))
        .filter(|rest| rest.is_empty() || rest.starts_with(' '))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    (!kept.is_empty()).then(|| {
        let all = kept.join("\n");
        all[..all.floor_char_boundary(MESSAGE_BYTES)].to_string()
    })
}

/// How pytest heads a test's failure section: the id after its file, classes joined by dots
/// (its parameters as they are).
fn section_name(id: &str) -> String {
    let rest = id.split_once("::").map_or(id, |(_, rest)| rest);
    let (head, params) = rest.find('[').map_or((rest, ""), |i| rest.split_at(i));
    format!("{}{params}", head.replace("::", "."))
}

#[cfg(test)]
mod tests {
    use super::*;

    const VERBOSE_RUN: &str = "collecting ... collected 3 items\n\n\
../../tests/test_final_state.py::test_inputs_unchanged FAILED       [ 33%]\n\
../../tests/test_final_state.py::test_mode[path0] PASSED     [ 66%]\n\
../../tests/test_final_state.py::TestReport::test_rows FAILED [100%]\n\n\
=================================== FAILURES ===================================\n\
____________________________ test_inputs_unchanged _____________________________\n\n\
    def test_inputs_unchanged():\n\
>       assert \"# Header\" in text, \"inputs.txt content seems modified.\"\n\
E       AssertionError: inputs.txt content seems modified.\n\
E       assert '# Header' in ''\n\n\
/tests/test_final_state.py:73: AssertionError\n\
____________________________ TestReport.test_rows ______________________________\n\n\
E       assert 1 == 3\n\
E        +  where 1 = len(['ip,status'])\n\
=========================== short test summary info ============================\n\
FAILED ../../tests/test_final_state.py::test_inputs_unchanged - Assertio...\n\
FAILED ../../tests/test_final_state.py::TestReport::test_rows\n\
========================= 2 failed, 1 passed in 0.03s ==========================\n";

    #[test]
    fn verdicts_and_what_each_failure_saw() {
        let r = report(VERBOSE_RUN);
        let got: Vec<(&str, &str)> = r.iter().map(|t| (t.name.as_str(), t.status.as_str())).collect();
        assert_eq!(
            got,
            [
                ("../../tests/test_final_state.py::test_inputs_unchanged", "failed"),
                ("../../tests/test_final_state.py::test_mode[path0]", "passed"),
                ("../../tests/test_final_state.py::TestReport::test_rows", "failed"),
            ]
        );
        assert_eq!(r[0].message.as_deref(), Some("AssertionError: inputs.txt content seems modified.\nassert '# Header' in ''"));
        assert_eq!(r[1].message, None);
        assert_eq!(r[2].message.as_deref(), Some("assert 1 == 3\n+  where 1 = len(['ip,status'])"));
    }

    #[test]
    fn summary_only_reports_and_no_report() {
        let r = report("FAILED t/test_a.py::test_x - assert 1 == 2\nPASSED t/test_a.py::test_y\n");
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].status.as_str(), r[1].status.as_str()), ("failed", "passed"));
        assert!(report("Reading package lists...\nbash: pytest: command not found\n").is_empty());
    }

    #[test]
    fn long_parametrized_ids_with_spaces_and_a_thin_header() {
        // pytest centres a long title in as little as one underscore each side.
        let out = "tests/test_s.py::test_tol[This is some garbage-True-0] FAILED [  7%]\n\
=================================== FAILURES ===================================\n\
_ test_tol[This is some garbage-True-0] _\n\
tests/test_s.py:237: in test_tol\n\
E   AssertionError: assert {'a': 1} == [{'a': 1}]\n\
!!!!!!!!!!!!!!!!!!!!!!!!!! stopping after 1 failures !!!!!!!!!!!!!!!!!!!!!!!!!!!\n";
        let r = report(out);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].name, "tests/test_s.py::test_tol[This is some garbage-True-0]");
        assert_eq!(r[0].message.as_deref(), Some("AssertionError: assert {'a': 1} == [{'a': 1}]"));
    }

    #[test]
    fn odd_ids_shared_names_teardowns_and_printed_lines() {
        let out = "a/test_x.py::test_content PASSED [ 20%]\n\
b/test_x.py::test_content FAILED [ 40%]\n\
b/test_x.py::test_p[c::d] FAILED [ 60%]\n\
b/test_x.py::test_q[[x]] FAILED [ 80%]\n\
b/test_x.py::test_t FAILED [100%]\n\
b/test_x.py::test_t ERROR [100%]\n\
==================================== ERRORS ====================================\n\
_________________________ ERROR at teardown of test_t __________________________\n\
E   RuntimeError: teardown boom\n\
=================================== FAILURES ===================================\n\
_________________________________ test_content _________________________________\n\
E   assert 'x' in ''\n\
________________________________ test_p[c::d] __________________________________\n\
E   assert 1 == 2\n\
________________________________ test_q[[x]] ___________________________________\n\
E   assert 3 == 4\n\
____________________________________ test_t ____________________________________\n\
E   assert 'real' in ''\n\
----------------------------- Captured stdout call -----------------------------\n\
E   this line was printed by the test\n";
        let r = report(out);
        let msg = |id: &str| r.iter().find(|t| t.name == id).and_then(|t| t.message.as_deref());
        assert_eq!(msg("a/test_x.py::test_content"), None, "the passing one of two same-named tests");
        assert_eq!(msg("b/test_x.py::test_content"), Some("assert 'x' in ''"));
        assert_eq!(msg("b/test_x.py::test_p[c::d]"), Some("assert 1 == 2"));
        assert_eq!(msg("b/test_x.py::test_q[[x]]"), Some("assert 3 == 4"));
        assert_eq!(msg("b/test_x.py::test_t"), Some("assert 'real' in ''"), "the call's failure, not the teardown, nor what it printed");
    }

    #[test]
    fn a_long_failure_is_clipped_on_a_char_boundary() {
        let long = format!("t.py::test_z FAILED\n=== FAILURES ===\n___ test_z ___\nE   assert '{}' == ''\n", "é".repeat(MESSAGE_BYTES));
        let m = report(&long).remove(0).message.unwrap();
        assert!(m.len() <= MESSAGE_BYTES && m.starts_with("assert 'é"));
    }
}
