//! AutoGen Magentic-One logs on the real corpus with a verdict file, a wrapped sample, bad input.

use coroner::ingest::{FileStatus, IngestOptions, InputErrorKind};
use coroner::model::{Budget, OutcomeStatus, Role, TerminationKind};

use crate::common::{by_task, corpus, ingest, ingest_with, samples, tempdir};

#[test]
fn real_logs_give_agent_steps_answers_terminations_and_joined_verdicts() {
    let Some(dir) = corpus("magentic-one") else { return };
    let (ts, s) =
        ingest_with(IngestOptions { inputs: vec![dir], verdicts: vec![samples("magentic-one/verdicts.csv")], ..IngestOptions::default() });
    assert_eq!(ts.len(), 4);
    assert_eq!(s.per_adapter.get("magentic-one"), Some(&4));
    assert!(
        ts.iter().all(|t| t.outcome.status == OutcomeStatus::Failed && t.outcome.source.as_ref().unwrap().file.ends_with("verdicts.csv"))
    );
    assert!(ts.iter().all(|t| t.session_id.as_deref() == Some(t.task_id.as_str())));

    let wb = by_task(&ts, "0a3cd321-3e76-4622-911b-0fda2e5d6b1a");
    assert_eq!(wb.steps.len(), 67);
    assert_eq!(wb.steps[0].role, Role::User);
    assert_eq!(wb.steps[0].agent.as_deref(), Some("human"));
    let count = |agent: &str| wb.steps.iter().filter(|s| s.agent.as_deref() == Some(agent)).count();
    assert_eq!((count("Orchestrator (thought)"), count("FileSurfer"), count("ComputerTerminal")), (35, 8, 3));
    assert!(wb.steps.iter().filter(|s| s.agent.as_deref() == Some("ComputerTerminal")).all(|s| s.role == Role::Environment));
    assert!(wb.steps.iter().filter(|s| s.agent.as_deref() == Some("WebSurfer")).all(|s| s.role == Role::Assistant));
    assert_eq!(
        wb.submission.as_deref(),
        Some(
            "Algeria, Bahrain, Brunei Darussalam, China, Congo, Rep., Gabon, Iran, Islamic Rep., Luxembourg, Macao SAR, China, Malaysia, Oman, Qatar, Saudi Arabia, Singapore"
        )
    );
    assert_eq!((wb.termination.kind, wb.termination.raw.as_deref()), (TerminationKind::AgentFinished, Some("No agent selected.")));

    let gyms = by_task(&ts, "0ec4371851b96837b0a81b3dd3df401415061bb532fbafeb4609f3337c358508");
    assert_eq!(gyms.steps.len(), 32);
    assert_eq!(gyms.submission.as_deref(), Some("Muscle Headz Gym, Ohio WV YMCA"));
    assert_eq!(gyms.termination.kind, TerminationKind::AgentFinished);

    // These two stop on a provider error (Azure content filter), then the scenario's answer.
    for (id, answer, steps) in
        [("0a65cb96-cb6e-4a6a-8aae-c1084f613456", "Skidmore", 93), ("114d5fd0-e2ae-4b6d-a65a-870da2d19c08", "23", 33)]
    {
        let t = by_task(&ts, id);
        assert_eq!(t.steps.len(), steps);
        assert_eq!(t.submission.as_deref(), Some(answer));
        assert_eq!(t.termination.kind, TerminationKind::Infrastructure, "{id}");
        assert!(t.termination.detail.as_deref().unwrap().starts_with("openai.BadRequestError: Error code: 400"), "{id}");
        assert_eq!(t.termination.rule.as_deref(), Some("magentic-content-filter"), "{id}");
    }
}

#[test]
fn a_wrapped_log_carries_its_verdict_and_the_round_limit() {
    let (ts, s) = ingest(&[&samples("magentic-one")]);
    assert_eq!(ts.len(), 3);
    assert!(matches!(s.files.iter().find(|f| f.display.ends_with("verdicts.csv")).unwrap().status, FileStatus::Outcome { entries: 4, .. }));
    let wrong = by_task(&ts, "studio-albums");
    assert_eq!(wrong.outcome.status, OutcomeStatus::Failed);
    assert_eq!(wrong.outcome.detail.as_deref(), Some("ground truth: 3"));
    assert_eq!(wrong.submission.as_deref(), Some("4"));
    let t = by_task(&ts, "sum-of-primes");
    assert_eq!(t.task_id, "sum-of-primes");
    assert_eq!(t.outcome.status, OutcomeStatus::Passed);
    assert_eq!(t.outcome.detail.as_deref(), Some("ground truth: 129"));
    assert_eq!(t.submission.as_deref(), Some("129"));
    assert_eq!((t.termination.budget, t.termination.limit, t.termination.consumed), (Some(Budget::Steps), Some(3.0), Some(2.0)));
    assert_eq!(
        (t.termination.raw.as_deref(), t.termination.rule.as_deref()),
        (Some("Max rounds (3) reached."), Some("magentic-max-rounds"))
    );
    assert_eq!(t.steps.iter().filter(|s| s.agent.as_deref() == Some("Coder")).count(), 1);
}

#[test]
fn bad_logs_are_quarantined_at_their_line() {
    let dir = tempdir();
    std::fs::write(dir.path().join("cut.json"), "[\n  {\"content\": \"q\", \"role\": \"human\"},\n  {\"content\": \"Initial plan\", \"role\": \"Orchestrator (thought)\"},\n  {\"content\": \"x").unwrap();
    std::fs::write(dir.path().join("wrong.json"), "[\n  {\"content\": \"q\", \"role\": \"human\"},\n  {\"content\": \"p\", \"role\": \"Orchestrator (thought)\"},\n  {\"content\": \"a\", \"role\": 7}\n]\n").unwrap();
    let (ts, s) = ingest(&[dir.path()]);
    assert!(ts.is_empty());
    let d = |n: &str| s.diagnostics.iter().find(|d| d.path.ends_with(n)).unwrap();
    assert_eq!((d("cut.json").kind, d("cut.json").line), (InputErrorKind::Truncated, Some(4)));
    assert_eq!((d("wrong.json").kind, d("wrong.json").line), (InputErrorKind::Schema, Some(4)));
}
