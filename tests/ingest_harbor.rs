//! Harbor trial directories and ATIF trajectories, on the real corpus.

use coroner::ingest::FileStatus;
use coroner::model::{OutcomeStatus, Role, TerminationKind};

use crate::common::{builtin, by_task, corpus, ingest, samples, statuses};

#[test]
fn atif_invalid_json_marks_the_unusable_reply_and_pairs_the_rest() {
    let Some(dir) = corpus("harbor-atif") else { return };
    let (ts, _) = ingest(&[&dir.join("hello-world-invalid-json.trajectory.json")]);
    assert_eq!(ts.len(), 1);
    let t = &ts[0];
    assert_eq!(t.task_id, "hello-world-invalid-json");
    assert_eq!(t.harness, "terminus-2");
    assert_eq!(t.model.as_deref(), Some("openai/gpt-4o"));
    assert_eq!(t.provenance.format_version.as_deref(), Some("ATIF-v1.7"));
    // 5 ATIF steps; the parse complaint on step 2 becomes its own environment step.
    assert_eq!(t.steps.len(), 6);
    assert_eq!(t.steps[1].role, Role::Assistant);
    assert!(t.steps[1].tool_calls.is_empty());
    assert!(t.steps[1].format_error.as_deref().unwrap().starts_with("Previous response had parsing errors"));
    assert_eq!(t.steps[2].role, Role::Environment);
    let calls: Vec<&str> = t.calls().map(|(_, c)| c.name.as_str()).collect();
    assert_eq!(calls, ["bash_command", "mark_task_complete", "mark_task_complete"]);
    // Every call has its result; the keystrokes argument parsed as JSON.
    assert!(t.calls().all(|(r, _)| t.result_of(r).is_some()));
    assert_eq!(t.steps[3].tool_calls[0].arguments["keystrokes"], "printf 'Hello, world!\\n' > hello.txt\n");
    assert_eq!(t.termination.kind, TerminationKind::AgentFinished);
    assert_eq!(t.usage.prompt_tokens, Some(2417));
    // Spans point at the step objects in the file.
    let span = t.steps[1].source_span.unwrap();
    let bytes = std::fs::read(dir.join("hello-world-invalid-json.trajectory.json")).unwrap();
    let text = &bytes[span.offset as usize..(span.offset + span.len) as usize];
    assert!(text.starts_with(b"{") && std::str::from_utf8(text).unwrap().contains("\"step_id\": 2"));
    assert_eq!(span.line, 19);
}

#[test]
fn atif_with_tool_definitions_declares_them() {
    let Some(dir) = corpus("harbor-atif") else { return };
    let (ts, _) = ingest(&[&dir.join("hello-world.trajectory.json")]);
    let t = &ts[0];
    assert_eq!(t.harness, "openhands");
    let names: Vec<&str> = t.declared_tools.as_ref().unwrap().iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names.len(), 6);
    assert!(names.contains(&"execute_bash") && names.contains(&"str_replace_editor") && names.contains(&"finish"));
    assert_eq!(t.steps.len(), 6);
    assert_eq!(t.steps.iter().filter(|s| s.role == Role::System).count(), 3);
    let edit = &t.steps[4].tool_results[0];
    assert_eq!(edit.call_id.as_deref(), Some("call_fake_1"));
    assert!(edit.call.is_some());
    assert_eq!(t.termination.kind, TerminationKind::AgentFinished);
}

#[test]
fn atif_timeout_trajectory_just_stops() {
    let Some(dir) = corpus("harbor-atif") else { return };
    let (ts, _) = ingest(&[&dir.join("hello-world-timeout.trajectory.json")]);
    let t = &ts[0];
    assert_eq!(t.steps.len(), 4);
    assert_eq!(t.calls().count(), 3);
    // The trial result that says AgentTimeoutError is not here, so the end is unknown.
    assert_eq!(t.termination.kind, TerminationKind::Unknown);
    assert_eq!(t.outcome.status, OutcomeStatus::Unknown);
}

#[test]
fn harbor_job_directories_join_trial_results() {
    let Some(dir) = corpus("harbor-trial") else { return };
    let (ts, summary) = ingest(&[&dir]);
    assert_eq!(ts.len(), 2);
    let pass = by_task(&ts, "citation-check");
    assert_eq!(pass.outcome.status, OutcomeStatus::Passed);
    assert_eq!(pass.outcome.reward, Some(1.0));
    assert_eq!(pass.outcome.source.as_ref().unwrap().field, "verifier_result.rewards.reward");
    assert_eq!(pass.harness, "gemini-cli");
    assert_eq!(pass.model.as_deref(), Some("google/gemini-3-flash-preview"));
    assert_eq!(pass.usage.prompt_tokens, Some(290_428));
    assert!((pass.usage.wall_seconds.unwrap() - 135.887_446).abs() < 1e-6);
    assert!(pass.steps.is_empty());
    assert!(pass.notes.iter().any(|n| n.contains("no agent/trajectory.json")));
    let fail = by_task(&ts, "lean4-proof");
    assert_eq!(fail.outcome.status, OutcomeStatus::Failed);
    assert_eq!(fail.usage.prompt_tokens, Some(1_252_771));
    assert_eq!(fail.usage.cached_tokens, Some(1_014_347));
    // The job result files are understood as job metadata, not transcripts.
    let skipped =
        summary.files.iter().filter(|f| matches!(&f.status, FileStatus::Skipped { reason } if reason.contains("harbor-job"))).count();
    assert_eq!(skipped, 2);
    assert_eq!(summary.quarantined_files(), 0);
}

/// How a trial that ended with this exception ended, once interpreted with the profile of
/// `harness` (Harbor's vocabulary joins every harness's profile).
fn interpreted_exception(harness: &str, kind: &str, message: &str) -> coroner::model::Termination {
    let mut t = coroner::model::Trajectory::new("t", harness, "harbor", 1, Vec::new());
    t.signals.status("exception_info.exception_type", kind);
    if !message.is_empty() {
        t.signals.error("exception_info.exception_message", message);
    }
    coroner::interpret::interpret(&mut t, builtin());
    t.termination
}

#[test]
fn harbor_exceptions_map_to_budgets_and_infrastructure() {
    use coroner::model::{Budget, Enforcer};
    let end = |kind: &str, message: &str| interpreted_exception("terminus-2", kind, message);
    let t = end("AgentTimeoutError", "Agent execution timed out after 600.0 seconds");
    assert_eq!(
        (t.kind, t.budget, t.enforced_by, t.limit),
        (TerminationKind::Budget, Some(Budget::WallTime), Some(Enforcer::Benchmark), Some(600.0))
    );
    assert_eq!(t.rule.as_deref(), Some("harbor-agent-timeout-exception"));
    assert_eq!(end("ContextLengthExceededError", "").budget, Some(Budget::Context));
    assert_eq!(end("OutputLengthExceededError", "").budget, Some(Budget::OutputTokens));
    for infra in [
        "VerifierTimeoutError",
        "EnvironmentStartTimeoutError",
        "RewardFileNotFoundError",
        "RewardFileEmptyError",
        "VerifierOutputParseError",
    ] {
        assert_eq!(end(infra, "").kind, TerminationKind::Infrastructure, "{infra}");
    }
    assert_eq!(end("RuntimeError", "Docker compose command failed for environment x").kind, TerminationKind::Infrastructure);
    // Whichever agent ran.
    assert_eq!(interpreted_exception("gemini-cli", "VerifierTimeoutError", "").kind, TerminationKind::Infrastructure);
    // An exception no entry explains is a harness error, with what it said.
    let other = end("ValueError", "bad thing");
    assert_eq!(other.kind, TerminationKind::HarnessError);
    assert_eq!((other.raw.as_deref(), other.detail.as_deref()), (Some("bad thing"), Some("bad thing")));
    assert_eq!(other.source.as_deref(), Some("exception_info.exception_message"));
}

#[test]
fn harbor_trials_record_the_exception_as_signals_and_interpretation_decides() {
    let dir = samples("harbor/job-2026-03-02__10-00-00");
    let (ts, _) = ingest(&[&dir]);
    let timeout = ts.iter().find(|t| t.provenance.files[0].path.contains("fix-math__Z9y8X7w")).unwrap();
    assert_eq!(statuses(timeout), [("exception_info.exception_type", "AgentTimeoutError")]);
    assert_eq!(timeout.signals.errors[0].text, "Agent execution timed out after 900.0 seconds");
    assert_eq!(timeout.signals.consumed.wall_seconds, Some(899.0));
    let term = &timeout.termination;
    assert_eq!((term.limit, term.consumed, term.rule.as_deref()), (Some(900.0), Some(899.0), Some("harbor-agent-timeout-exception")));
    let docker = ts.iter().find(|t| t.task_id == "build-site").unwrap();
    assert_eq!(
        (docker.termination.kind, docker.termination.rule.as_deref()),
        (TerminationKind::Infrastructure, Some("harbor-environment-message"))
    );
    let context = ts.iter().find(|t| t.provenance.files[0].path.contains("parse-logs__Q1w2E3r")).unwrap();
    assert_eq!(context.termination.rule.as_deref(), Some("context-window-exception"));
}

#[test]
fn verdict_files_given_on_the_command_line_win_and_the_replaced_verdict_is_noted() {
    let Some(dir) = corpus("harbor-trial") else { return };
    let tmp = crate::common::tempdir();
    let v = tmp.path().join("verdicts.csv");
    std::fs::write(&v, "task_id,outcome\nlean4-proof,passed\n").unwrap();
    let (ts, _) = crate::common::ingest_with(coroner::ingest::IngestOptions { inputs: vec![dir], verdicts: vec![v], ..Default::default() });
    let t = by_task(&ts, "lean4-proof");
    assert_eq!(t.outcome.status, OutcomeStatus::Passed);
    assert!(t.notes.iter().any(|n| n.starts_with("outcome failed from") && n.contains("replaced by passed")), "{:?}", t.notes);
    assert!(t.provenance.files.iter().any(|f| f.role == "verdicts"));
    // The other trial keeps its own verdict.
    assert_eq!(by_task(&ts, "citation-check").outcome.status, OutcomeStatus::Passed);
}

#[test]
fn a_trial_result_given_alone_still_reads_its_trajectory() {
    let dir = crate::common::samples("doubles/regressed__d0uble0");
    let (alone, _) = ingest(&[&dir.join("result.json")]);
    let (whole, _) = ingest(&[&dir]);
    assert_eq!(alone.len(), 1);
    assert_eq!(alone[0].steps.len(), whole[0].steps.len());
    assert!(alone[0].steps.len() >= 6);
    assert!(alone[0].provenance.files.iter().any(|f| f.path.ends_with("regressed__d0uble0/agent/trajectory.json")));
    assert!(!alone[0].notes.iter().any(|n| n.contains("no agent/trajectory.json")));
}

#[test]
fn linked_atif_files_make_one_record_and_are_not_counted_again() {
    let (ts, summary) = ingest(&[&samples("atif/linked")]);
    assert_eq!(ts.len(), 1, "the continuation and the subagent file are part of main's record");
    assert_eq!(summary.trajectories, 1);
    let t = &ts[0];
    let roles: Vec<&str> = t.provenance.files.iter().map(|f| f.role.as_str()).collect();
    assert_eq!(roles, ["transcript", "subagent_transcript", "transcript_continuation"]);
    let texts: Vec<&str> = t.steps.iter().map(|s| s.text.as_str()).collect();
    assert_eq!(texts, ["fix it", "delegating", "subagent looking", "continuing"]);
    assert_eq!(t.steps[2].agent.as_deref(), Some("subagent:sub-1"), "the subagent's steps say whose they are");
}

/// A verifier report is read for its per-test results, a CTRF file first; one that does not read
/// or is too large to hold leaves the verdict to the rewards, with a note, and costs nothing else.
#[test]
fn verifier_reports_that_do_not_read_or_are_huge_leave_the_verdict_to_the_rewards() {
    let tmp = crate::common::tempdir();
    let trial = tmp.path().join("job/dns-hosts__L00kOn1y");
    let src = samples("harbor-keystrokes/job-2026-03-05__09-00-00/dns-hosts__L00kOn1y");
    for f in ["result.json", "agent/trajectory.json"] {
        std::fs::create_dir_all(trial.join(f).parent().unwrap()).unwrap();
        std::fs::copy(src.join(f), trial.join(f)).unwrap();
    }
    std::fs::create_dir_all(trial.join("verifier")).unwrap();
    std::fs::write(trial.join("verifier/ctrf.json"), b"{\"results\": {\"tests\": 3}}").unwrap();
    // Sparse: the size is what is checked, never the bytes.
    std::fs::File::create(trial.join("verifier/test-stdout.txt")).unwrap().set_len(65 << 20).unwrap();
    let (ts, _) = ingest(&[tmp.path()]);
    assert_eq!(ts.len(), 1);
    let t = &ts[0];
    assert_eq!(t.outcome.status, OutcomeStatus::Failed, "the rewards still decide");
    assert!(t.outcome.tests.is_empty());
    assert!(t.notes.iter().any(|n| n.ends_with("verifier/ctrf.json is not a CTRF report; left")), "{:?}", t.notes);
    assert!(t.notes.iter().any(|n| n.ends_with("verifier/test-stdout.txt is over 64 MB; not read")), "{:?}", t.notes);
    assert!(!t.provenance.files.iter().any(|f| f.role == "verifier_output"));
}

/// OpenClaw's ATIF writes each tool result as an `agent` step without calls, naming the call it
/// answers in `extra.tool_call_id` (the public Terminal-Bench 2.0 job of OpenClaw + GLM-5): the
/// steps are results of those calls, not replies, and the session that stops on an unanswered
/// call is a truncated log.
#[test]
fn openclaw_result_steps_answer_earlier_calls_and_a_session_cut_on_a_call_is_truncated() {
    let dir = samples("harbor-openclaw/job-2026-04-15__10-00-00");
    let (ts, _) = ingest(&[&dir]);
    let caffe = by_task(&ts, "build-caffe");
    assert_eq!(caffe.harness, "openclaw");
    // user, then reply/result pairs; the last reply's poll has no result.
    let roles: Vec<Role> = caffe.steps.iter().map(|s| s.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant, Role::Tool, Role::Assistant, Role::Tool, Role::Assistant]);
    assert!(caffe.steps[2].text.is_empty(), "a result step's message is the result, not a reply");
    let answered: Vec<bool> = caffe.calls().map(|(r, _)| caffe.result_of(r).is_some()).collect();
    assert_eq!(answered, [true, true, false]);
    let r = caffe.result_of(caffe.calls().nth(1).unwrap().0).unwrap();
    assert!(r.output.starts_with("Command still running"));
    assert_eq!(r.exit_code, Some(0));
    assert_eq!(caffe.termination.kind, TerminationKind::Infrastructure);
    assert_eq!(caffe.termination.rule.as_deref(), Some(coroner::model::TRUNCATED_LOG));
    assert!(caffe.termination.detail.as_deref().unwrap().contains("(process) never got a result"));
    // A run that ends on a reply without a call ended itself.
    let vm = by_task(&ts, "write-vm");
    assert_eq!(vm.termination.kind, TerminationKind::AgentStoppedWithoutFinish);
    assert_eq!(vm.steps.iter().filter(|s| s.role == Role::Assistant).count(), 3);
}

/// A log of model calls never records its last call's result (OpenHands completion logs): the
/// missing result there is how the record ends, not a cut.
#[test]
fn a_format_that_never_records_the_last_result_is_not_truncated() {
    let (ts, _) = ingest(&[&samples("openhands/completions")]);
    let t = by_task(&ts, "acme__ledger-213");
    assert!(t.signals.last_result_unrecorded);
    assert!(t.calls().last().is_some_and(|(r, _)| t.result_of(r).is_none()));
    assert_eq!(t.termination.kind, TerminationKind::Unknown);
}
