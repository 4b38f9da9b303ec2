//! CTRF test reports (Common Test Report Format), as `pytest --ctrf` writes them for Harbor's
//! verifiers (`verifier/ctrf.json`): `results.tests[]`, each with `name`, `status` and, for a
//! failure, pytest's `trace` and a one-line `message`.
//!
//! The trace's `E` lines say what the test compared, which is what a reader (and the rules)
//! need; the message is pytest's phase summary ("The test failed in the call phase due to an
//! assertion error") and stands in only where there is no trace.

use serde::Deserialize;

use super::pytest::failure_lines;
use crate::model::TestResult;

#[derive(Deserialize)]
struct Doc {
    results: Results,
}

#[derive(Deserialize)]
struct Results {
    tests: Vec<Test>,
}

#[derive(Deserialize)]
struct Test {
    name: String,
    status: String,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    trace: Option<String>,
}

/// The tests of a CTRF report, in its order; `None` when the bytes are not one (a report that
/// does not read leaves the verdict to the rewards).
#[must_use]
pub fn report(bytes: &[u8]) -> Option<Vec<TestResult>> {
    let doc: Doc = serde_json::from_slice(bytes).ok()?;
    Some(
        doc.results
            .tests
            .into_iter()
            .map(|t| {
                let message = if matches!(t.status.as_str(), "passed" | "skipped" | "pending") {
                    None
                } else {
                    t.trace.as_deref().and_then(|tr| failure_lines(tr.lines())).or(t.message.filter(|m| !m.trim().is_empty()))
                };
                TestResult { message, ..TestResult::new(t.name, t.status.to_ascii_lowercase()) }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    // The shape `pytest --ctrf` writes (pytest-json-ctrf), one test passing and one failing.
    const REPORT: &str = r#"{"results": {"tool": {"name": "pytest", "version": "8.4.1"},
      "summary": {"tests": 2, "passed": 1, "failed": 1, "skipped": 0, "pending": 0, "other": 0},
      "tests": [
        {"name": "test_outputs.py::TestAnswer::test_file_exists", "status": "passed", "duration": 0.0004, "retries": 0, "file_path": "test_outputs.py"},
        {"name": "test_outputs.py::test_inputs_untouched", "status": "failed", "raw_status": "call_failed", "duration": 0.001,
         "trace": "/tests/test_outputs.py:7: in test_inputs_untouched\n    assert 'TBD' in text\nE   AssertionError: assert 'TBD' in ''",
         "message": "The test failed in the call phase due to an assertion error"}
      ]}}"#;

    #[test]
    fn tests_with_the_e_lines_of_each_failure() {
        let r = report(REPORT.as_bytes()).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(
            (r[0].name.as_str(), r[0].status.as_str(), r[0].message.as_deref()),
            ("test_outputs.py::TestAnswer::test_file_exists", "passed", None)
        );
        assert_eq!(r[1].status, "failed");
        assert_eq!(r[1].message.as_deref(), Some("AssertionError: assert 'TBD' in ''"));
    }

    #[test]
    fn the_message_stands_in_without_a_trace_and_other_json_is_no_report() {
        let r =
            report(br#"{"results": {"tests": [{"name": "t::a", "status": "failed", "message": "AssertionError: no report.json found"}]}}"#)
                .unwrap();
        assert_eq!(r[0].message.as_deref(), Some("AssertionError: no report.json found"));
        assert!(report(br#"{"reward": 0.0}"#).is_none());
        assert!(report(b"not json").is_none());
    }
}
