//! OpenHands V0 event lists (real corpus) and evaluation output.jsonl (samples).

use coroner::ingest::{FileStatus, InputErrorKind};
use coroner::model::{Budget, CallRef, Enforcer, OutcomeStatus, Role, TerminationKind};

use crate::common::{by_task, corpus, ingest, samples, tempdir};

#[test]
fn real_chat_events_become_turns_and_a_finish() {
    let Some(dir) = corpus("openhands") else { return };
    let path = dir.join("basic_interactions.json");
    let (ts, s) = ingest(&[&path]);
    assert_eq!(ts.len(), 1);
    assert_eq!(s.per_adapter.get("openhands"), Some(&1));
    let t = &ts[0];
    assert_eq!(t.task_id, "basic_interactions");
    assert_eq!(t.harness, "openhands");
    assert_eq!(t.model.as_deref(), Some("gpt-4o-2024-08-06"));
    let roles: Vec<Role> = t.steps.iter().map(|s| s.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant, Role::User, Role::Assistant, Role::User, Role::Assistant]);
    assert_eq!(t.steps[0].text, "what's 1+1?");
    assert_eq!(t.steps[1].text, "1 + 1 equals 2.");
    let calls: Vec<(&str, Option<&str>)> = t.calls().map(|(_, c)| (c.name.as_str(), c.id.as_deref())).collect();
    assert_eq!(calls, [("finish", Some("call_IpyczPgEAwtpRWFZ2RNokTdH"))]);
    assert_eq!(t.termination.kind, TerminationKind::AgentFinished);
    assert_eq!(t.termination.raw.as_deref(), Some("finish"));
    assert_eq!(t.termination.rule.as_deref(), Some("openhands-finish-action"));
    assert!(!t.termination.gave_up);
    assert_eq!(t.outcome.status, OutcomeStatus::Unknown);
    assert_eq!((t.usage.prompt_tokens, t.usage.completion_tokens, t.usage.cached_tokens), (Some(2473), Some(10), Some(2304)));
    let tok = t.steps[5].tokens.as_ref().unwrap();
    assert_eq!((tok.prompt, tok.completion), (Some(2473), Some(10)));
    // Spans point at the event objects.
    let bytes = std::fs::read(&path).unwrap();
    let span = t.steps[5].source_span.unwrap();
    let text = std::str::from_utf8(&bytes[span.offset as usize..(span.offset + span.len) as usize]).unwrap();
    assert!(text.starts_with('{') && text.contains("\"id\": 15") && text.ends_with('}'));
    assert_eq!(span.line, 67);
}

#[test]
fn real_tool_events_pair_by_cause_with_exit_codes() {
    let Some(dir) = corpus("openhands") else { return };
    let (ts, _) = ingest(&[&dir.join("wrong_initial_state.json")]);
    let t = &ts[0];
    assert_eq!(t.model.as_deref(), Some("claude-3-5-sonnet-20241022"));
    assert_eq!(t.steps.len(), 8);
    let calls: Vec<&str> = t.calls().map(|(_, c)| c.name.as_str()).collect();
    assert_eq!(calls, ["str_replace_editor", "execute_bash", "str_replace_editor", "finish"]);
    // Arguments are the model's own (JSON inside the response), not the harness's args.
    assert_eq!(t.steps[1].tool_calls[0].arguments["command"], "view");
    assert_eq!(t.steps[1].tool_calls[0].arguments["path"], "/workspace");
    assert_eq!(t.steps[3].tool_calls[0].arguments["command"], "mv /workspace/game_2048.py /workspace/2048.py");
    assert_eq!(t.steps[1].text, "I'll help you rename the file. First, let me check if the file exists and its location.");
    // Each observation answers the action its `cause` names.
    let mv = &t.steps[4].tool_results[0];
    assert_eq!(mv.call, Some(CallRef { step: 3, call: 0 }));
    assert_eq!(mv.call_id.as_deref(), Some("toolu_01PuY3mXrE6fm3j52GscR4rj"));
    assert_eq!(mv.exit_code, Some(0));
    assert!(!mv.is_error);
    assert_eq!(t.steps[2].tool_results[0].call, Some(CallRef { step: 1, call: 0 }));
    assert!(t.steps[6].tool_results[0].output.ends_with("/workspace/2048.py"));
    assert_eq!(t.steps[6].tool_results[0].exit_code, None);
    assert!(t.unpaired_results.is_empty());
    assert_eq!(t.calls().filter(|(r, _)| t.result_of(*r).is_some()).count(), 3, "finish has no observation");
    assert_eq!(t.termination.kind, TerminationKind::AgentFinished);
    // Four model responses, each counted once.
    assert_eq!((t.usage.prompt_tokens, t.usage.completion_tokens, t.usage.cached_tokens), (Some(14_828), Some(358), Some(10_879)));
    assert!((t.usage.wall_seconds.unwrap() - 11.942_405).abs() < 1e-6);
    assert_eq!(t.started_at.as_deref(), Some("2025-01-27T23:16:50.239610"));
}

#[test]
fn evaluation_output_keeps_good_lines_around_a_broken_one() {
    let file = samples("openhands/output.jsonl");
    let (ts, s) = ingest(&[&file]);
    assert_eq!(ts.len(), 6);
    assert_eq!(s.quarantined_records, 1);
    assert!(matches!(s.files[0].status, FileStatus::Ingested { adapter: "openhands-eval", trajectories: 6 }));
    let d = &s.diagnostics[0];
    assert!(d.path.ends_with("openhands/output.jsonl"));
    assert_eq!(d.line, Some(3));
    assert_eq!(d.kind, InputErrorKind::Truncated);
    assert!(d.to_string().contains("output.jsonl:3"), "{d}");

    let ok = by_task(&ts, "django__django-11099");
    assert_eq!(ok.model.as_deref(), Some("anthropic/claude-sonnet-4-20250514"));
    assert_eq!(ok.harness_version.as_deref(), Some("0.51.0"));
    assert_eq!(ok.outcome.status, OutcomeStatus::Passed);
    assert_eq!(ok.outcome.source.as_ref().unwrap().field, "test_result.report.resolved (line 1)");
    assert!(ok.submission.as_deref().unwrap().starts_with("diff --git a/django/contrib/auth/validators.py"));
    assert_eq!(ok.termination.kind, TerminationKind::AgentFinished);
    assert_eq!((ok.termination.raw.as_deref(), ok.termination.source.as_deref()), (Some("true"), Some("args.task_completed")));
    assert!(!ok.termination.gave_up);
    let tools: Vec<&str> = ok.declared_tools.as_ref().unwrap().iter().map(|d| d.name.as_str()).collect();
    assert_eq!(tools, ["execute_bash", "think", "finish", "str_replace_editor"]);
    assert_eq!(ok.usage.cost_usd, Some(0.0712));
    assert_eq!(ok.usage.api_calls, Some(4));
    let cmds: Vec<&str> =
        ok.calls().filter(|(_, c)| c.name == "execute_bash").filter_map(|(_, c)| c.arguments["command"].as_str()).collect();
    assert_eq!(cmds.len(), 2);
    assert!(cmds[1].ends_with("auth_tests.test_validators"));
    assert!(ok.calls().filter(|(_, c)| c.name != "finish").all(|(r, _)| ok.result_of(r).is_some()));
    // Spans of events inside a JSON line carry that line.
    assert!(ok.steps.iter().all(|s| s.source_span.is_some_and(|sp| sp.line == 1)));

    let iter = by_task(&ts, "astropy__astropy-12907");
    assert_eq!((iter.termination.budget, iter.termination.enforced_by), (Some(Budget::Steps), Some(Enforcer::Harness)));
    assert_eq!((iter.termination.consumed, iter.termination.limit), (Some(3.0), Some(3.0)));
    assert_eq!(iter.termination.source.as_deref(), Some("error"));
    assert_eq!(iter.termination.rule.as_deref(), Some("openhands-max-iterations"));
    // The error signal points at the `error` string of its line.
    let sp = iter.termination.span.unwrap();
    let bytes = std::fs::read(&file).unwrap();
    let quoted = std::str::from_utf8(&bytes[sp.offset as usize..(sp.offset + sp.len) as usize]).unwrap();
    assert_eq!(quoted, "\"RuntimeError: Agent reached maximum iteration. Current iteration: 3, max iteration: 3\"");
    assert_eq!(iter.outcome.status, OutcomeStatus::Failed);
    assert_eq!(iter.submission.as_deref(), Some(""));
    let failing = iter.steps.iter().flat_map(|s| &s.tool_results).find(|r| r.exit_code == Some(1)).unwrap();
    assert!(failing.is_error && failing.output.contains("1 failed"));

    let stuck = by_task(&ts, "sympy__sympy-13480");
    assert_eq!((stuck.termination.budget, stuck.termination.enforced_by), (Some(Budget::LoopGuard), Some(Enforcer::Harness)));
    assert_eq!(stuck.outcome.status, OutcomeStatus::Unknown, "no evaluation report yet");
    assert_eq!(stuck.calls().count(), 4);

    let cost = by_task(&ts, "psf__requests-2317");
    assert_eq!(cost.termination.budget, Some(Budget::Cost));
    assert_eq!((cost.termination.consumed, cost.termination.limit), (Some(1.01), Some(1.0)));
    assert_eq!(cost.outcome.status, OutcomeStatus::Failed);
    assert!(cost.outcome.detail.as_deref().unwrap().contains("failed_apply_patch"));

    let unknown = by_task(&ts, "pytest-dev__pytest-5227");
    assert_eq!((unknown.termination.raw.as_deref(), unknown.termination.source.as_deref()), (Some("partial"), Some("args.task_completed")));
    assert_eq!(unknown.termination.kind, TerminationKind::AgentFinished);
    assert!(unknown.termination.gave_up, "task_completed=partial: the agent did not claim the task was done");
    let (r, call) = unknown.calls().find(|(_, c)| c.name == "search_code").expect("the rejected call is rebuilt");
    assert_eq!(call.raw_arguments.as_deref(), Some("{'query': 'DEFAULT_LOG_FORMAT'}"));
    let rejected = unknown.result_of(r).unwrap();
    assert!(rejected.is_error);
    assert!(rejected.unknown_tool.as_deref().unwrap().starts_with("Tool search_code is not registered."));
    assert!(unknown.signals.statuses.iter().all(|s| s.step.is_some() && s.span.is_some()));

    let pairs = by_task(&ts, "matplotlib__matplotlib-23314");
    assert_eq!(pairs.calls().count(), 2, "old [action, observation] pairs are read too");
    assert_eq!(pairs.outcome.status, OutcomeStatus::Errored);
    assert_eq!(pairs.outcome.detail.as_deref(), Some("the tests timed out"));
    assert_eq!(pairs.steps[2].tool_results[0].exit_code, Some(0));
}

#[test]
fn a_saved_trajectory_ending_in_error_state_names_the_loop_guard() {
    let (ts, _) = ingest(&[&samples("openhands/stuck-trajectory.json")]);
    let t = &ts[0];
    assert_eq!(t.task_id, "stuck-trajectory");
    assert_eq!(t.termination.budget, Some(Budget::LoopGuard));
    assert_eq!(t.termination.source.as_deref(), Some("agent_state_changed.extras.reason"));
    assert_eq!(t.termination.raw.as_deref(), Some("AgentStuckInLoopError: Agent got stuck in a loop"));
    assert_eq!(t.steps.iter().filter(|s| s.role == Role::Tool).count(), 3);
    assert_eq!(t.declared_tools.as_ref().map(Vec::len), Some(4));
}

/// One evaluation record whose `error` is `error`, interpreted with the built-in profile.
fn with_error(error: &str) -> coroner::model::Trajectory {
    let dir = tempdir();
    let line = serde_json::json!({
        "instance_id": "x__x-1",
        "metadata": {"max_iterations": 50},
        "history": [{"id": 0, "source": "user", "action": "message", "args": {"content": "fix"}}],
        "error": error,
    });
    std::fs::write(dir.path().join("output.jsonl"), format!("{line}\n")).unwrap();
    let (mut ts, _) = ingest(&[dir.path()]);
    ts.remove(0)
}

#[test]
fn controller_errors_map_to_budgets() {
    let t = with_error("RuntimeError: Agent reached maximum iteration. Current iteration: 50, max iteration: 50");
    assert_eq!((t.termination.kind, t.termination.budget, t.termination.limit), (TerminationKind::Budget, Some(Budget::Steps), Some(50.0)));
    let t = with_error("Agent reached maximum number of iterations");
    assert_eq!((t.termination.budget, t.termination.limit), (Some(Budget::Steps), Some(50.0)), "the limit from the metadata");
    assert_eq!(
        with_error("LLMContextWindowExceedError: Conversation history longer than LLM context window limit.").termination.budget,
        Some(Budget::Context)
    );
    let t = with_error("Timeout after 7200 seconds");
    assert_eq!(
        (t.termination.budget, t.termination.enforced_by, t.termination.limit),
        (Some(Budget::WallTime), Some(Enforcer::Benchmark), Some(7200.0))
    );
    assert_eq!(with_error("STATUS$ERROR_LLM_SERVICE_UNAVAILABLE").termination.kind, TerminationKind::Infrastructure);
    assert_eq!(with_error("AgentRuntimeDisconnectedError: gone").termination.kind, TerminationKind::Infrastructure);
    let t = with_error("ValueError: what");
    assert_eq!((t.termination.kind, t.termination.detail.as_deref()), (TerminationKind::HarnessError, Some("ValueError: what")));
}

#[test]
fn broken_openhands_files_are_quarantined_with_their_line() {
    let dir = tempdir();
    let list = dir.path().join("events.json");
    std::fs::write(&list, "[\n  {\"id\": 0, \"source\": \"user\", \"action\": \"message\", \"args\": {\"content\": \"hi\"}},\n  {\"id\": 1, \"source\": \"agent\", \"action\": \"message\", \"args\": {\"content\": \"oops\"}\n  {\"id\": 2}\n]\n").unwrap();
    let bad = dir.path().join("output.jsonl");
    std::fs::write(&bad, "{\"instance_id\": \"a\", \"history\": [], \"test_result\": {\"git_patch\": \"\"}}\n{\"instance_id\": \"b\", \"history\": {\"not\": \"a list\"}}\n").unwrap();
    let (ts, s) = ingest(&[dir.path()]);
    assert_eq!(ts.len(), 1, "instance a survives");
    let list_diag = s.diagnostics.iter().find(|d| d.path.ends_with("events.json")).unwrap();
    assert_eq!(list_diag.line, Some(4));
    let line_diag = s.diagnostics.iter().find(|d| d.path.ends_with("output.jsonl")).unwrap();
    assert_eq!(line_diag.line, Some(2));
    assert_eq!(line_diag.kind, InputErrorKind::Schema);
}

#[test]
fn evaluation_lines_longer_than_the_probe_are_still_recognized() {
    let dir = tempdir();
    let patch = "+".repeat(100_000);
    let line = format!(
        "{{\"instance_id\": \"big__big-1\", \"test_result\": {{\"git_patch\": \"{patch}\", \"report\": {{\"resolved\": true}}}}, \"instruction\": \"fix\", \"history\": [{{\"id\": 0, \"source\": \"user\", \"message\": \"fix\", \"action\": \"message\", \"args\": {{\"content\": \"fix\"}}}}], \"error\": null}}\n"
    );
    std::fs::write(dir.path().join("output.jsonl"), format!("{line}{}", line.replace("big__big-1", "big__big-2"))).unwrap();
    let (ts, s) = ingest(&[dir.path()]);
    assert_eq!(s.per_adapter.get("openhands-eval"), Some(&2));
    assert_eq!(ts.len(), 2);
    assert_eq!(ts[1].task_id, "big__big-2");
    assert_eq!(ts[1].outcome.status, OutcomeStatus::Passed);
    assert_eq!(ts[0].submission.as_ref().map(String::len), Some(100_000));
    // The second line's event span starts after the first line.
    assert_eq!(ts[1].steps[0].source_span.unwrap().line, 2);
    assert!(ts[1].steps[0].source_span.unwrap().offset as usize > line.len());
}
