//! Aider benchmark exercise results and chat histories; the leaderboard YAML is skipped.

use coroner::ingest::{FileStatus, InputErrorKind};
use coroner::model::{Budget, Enforcer, OutcomeStatus, Role, TerminationKind};

use crate::common::{by_task, corpus, ingest, samples, tempdir};

#[test]
fn the_real_leaderboard_is_recognized_and_skipped() {
    let Some(dir) = corpus("aider") else { return };
    let (ts, s) = ingest(&[&dir.join("polyglot_leaderboard.yml")]);
    assert!(ts.is_empty());
    assert_eq!(s.quarantined_files(), 0);
    match &s.files[0].status {
        FileStatus::Skipped { reason } => assert!(reason.contains("aider-leaderboard") && reason.contains("not a trajectory"), "{reason}"),
        other => panic!("expected skipped, got {other:?}"),
    }
}

#[test]
fn exercises_give_outcomes_tries_and_counters() {
    let (ts, s) = ingest(&[&samples("aider")]);
    assert_eq!(ts.len(), 4);
    assert_eq!(s.quarantined_files(), 0);
    // The chat history and the Exercism config are read with their exercise.
    assert!(matches!(
        s.files.iter().find(|f| f.display.ends_with(".aider.chat.history.md")).unwrap().status,
        FileStatus::Companion { adapter: "aider-chat-history" }
    ));
    assert!(matches!(
        s.files.iter().find(|f| f.display.ends_with(".meta/config.json")).unwrap().status,
        FileStatus::Companion { adapter: "exercism-config" }
    ));

    let bowling = by_task(&ts, "python/bowling");
    assert_eq!(bowling.harness, "aider");
    assert_eq!(bowling.model.as_deref(), Some("anthropic/claude-3-7-sonnet-20250219"));
    assert_eq!(bowling.harness_version.as_deref(), Some("6451d59"));
    assert_eq!(bowling.outcome.status, OutcomeStatus::Passed);
    let tries: Vec<(&str, &str)> = bowling.outcome.tests.iter().map(|t| (t.name.as_str(), t.status.as_str())).collect();
    assert_eq!(tries, [("try 1", "failed"), ("try 2", "passed")]);
    assert_eq!(bowling.termination.kind, TerminationKind::AgentFinished);
    assert_eq!(
        (bowling.termination.raw.as_deref(), bowling.termination.source.as_deref()),
        (Some("[false, true]"), Some("tests_outcomes"))
    );
    assert_eq!(bowling.termination.rule.as_deref(), Some("aider-tries-ran"));
    assert!(bowling.notes.iter().any(|n| n.starts_with("1 malformed response")));
    assert_eq!((bowling.usage.cost_usd, bowling.usage.wall_seconds, bowling.usage.api_calls), (Some(0.0412), Some(41.7), Some(3)));
    assert_eq!((bowling.usage.prompt_tokens, bowling.usage.completion_tokens), (Some(9210), Some(1822)));
    // Steps from the chat history: what was sent, the replies, aider's output, the test runs.
    let roles: Vec<Role> = bowling.steps.iter().map(|s| s.role).collect();
    assert_eq!(
        roles,
        [
            Role::Environment,
            Role::User,
            Role::Assistant,
            Role::Environment,
            Role::Assistant,
            Role::Environment,
            Role::Environment,
            Role::User,
            Role::Assistant,
            Role::Environment,
            Role::Environment
        ]
    );
    assert!(bowling.steps[1].text.starts_with("# Instructions\n\nScore a bowling game."));
    assert!(bowling.steps[2].format_error.as_deref().unwrap().starts_with("The LLM did not conform to the edit format."));
    assert!(bowling.steps[4].format_error.is_none());
    assert!(bowling.steps[6].text.contains("FAILED bowling_test.py::BowlingTest::test_all_strikes_is_a_perfect_game"));
    assert!(bowling.steps[10].text.contains("Ran 6 tests"));
    let span = bowling.steps[8].source_span.unwrap();
    assert_eq!(span.file, 1);
    assert_eq!(bowling.provenance.files[1].role, "transcript");

    let grep = by_task(&ts, "rust/grep");
    assert_eq!(grep.outcome.status, OutcomeStatus::Failed);
    assert_eq!(
        (grep.termination.kind, grep.termination.budget, grep.termination.enforced_by),
        (TerminationKind::Budget, Some(Budget::Context), Some(Enforcer::Provider))
    );
    assert_eq!((grep.termination.raw.as_deref(), grep.termination.source.as_deref()), (Some("1"), Some("num_exhausted_context_windows")));
    assert!(grep.steps.is_empty());

    let md = by_task(&ts, "go/markdown");
    // Both tries handed in and failed: the benchmark's tries ran out (DESIGN.md: budget attempts).
    assert_eq!((md.termination.kind, md.termination.budget), (TerminationKind::Budget, Some(Budget::Attempts)));
    assert_eq!((md.termination.limit, md.termination.consumed), (Some(2.0), Some(2.0)));
    assert_eq!(md.termination.raw.as_deref(), Some("[false, false]"));
    assert!(md.notes.iter().any(|n| n == "2 test runs timed out"), "{:?}", md.notes);
    assert!(md.notes.iter().any(|n| n.starts_with("1 question aider asked")));

    let crashed = by_task(&ts, "javascript/react");
    assert_eq!(crashed.termination.kind, TerminationKind::HarnessError);
    assert_eq!(crashed.termination.raw.as_deref(), Some("ValueError: No test command found for files with extensions: set()"));
    assert_eq!(crashed.termination.source.as_deref(), Some("exception"));
    assert_eq!(crashed.outcome.status, OutcomeStatus::Errored);
}

#[test]
fn a_bad_results_file_is_quarantined_at_its_line() {
    let dir = tempdir();
    let ex = dir.path().join("python/exercises/practice/anagram");
    std::fs::create_dir_all(&ex).unwrap();
    std::fs::write(
        ex.join(".aider.results.json"),
        "{\n    \"testcase\": \"anagram\",\n    \"model\": \"gpt-4o\",\n    \"tests_outcomes\": [true, \"no\"]\n}\n",
    )
    .unwrap();
    let (ts, s) = ingest(&[dir.path()]);
    assert!(ts.is_empty());
    assert!(matches!(s.files[0].status, FileStatus::Quarantined { kind: InputErrorKind::Schema }));
    let d = &s.diagnostics[0];
    assert!(d.path.ends_with("anagram/.aider.results.json"), "{}", d.path);
    assert_eq!(d.line, Some(4));
}
