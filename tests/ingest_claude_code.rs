//! Claude Code session transcripts (real 2.1.14 corpus and samples), stream-json output, the
//! 2.1.144 tool list capture, and broken transcripts.

use coroner::ingest::adapters::agent_cli::claude_code::tools_capture;
use coroner::ingest::{FileStatus, InputErrorKind};
use coroner::model::{Budget, CallRef, Enforcer, Role, TerminationKind, Trajectory};

use crate::common::{by_task, coroner_in, corpus, ingest, samples, tempdir};

fn calls(t: &Trajectory) -> Vec<(&str, &str)> {
    t.calls().map(|(_, c)| (c.name.as_str(), c.id.as_deref().unwrap_or(""))).collect()
}

fn roles(t: &Trajectory) -> Vec<Role> {
    t.steps.iter().map(|s| s.role).collect()
}

#[test]
fn real_session_rebuilds_streamed_turns_and_the_stop_hook() {
    let Some(dir) = corpus("claude-code-session-jsonl") else { return };
    let (ts, s) = ingest(&[&dir.join("hello-world-script/transcript.jsonl")]);
    assert_eq!(s.per_adapter.get("claude-code"), Some(&1));
    let t = &ts[0];
    assert_eq!(t.task_id, "hello-world-script", "a generic file name takes its directory");
    assert_eq!(t.workdir.as_deref(), Some("/tmp/tmp74wiyiny"), "the session's cwd is its workspace, though it lies in /tmp");
    let c = coroner::classify::Classifier::new(coroner::rules::Rules::builtin().unwrap(), Vec::new(), Default::default());
    assert_eq!(c.classify(t).mechanics.successful_mutations, 2, "`chmod +x /tmp/tmp74wiyiny/hello.sh` changes the workspace");
    assert_eq!(t.session_id.as_deref(), Some("de3b8b19-5bc0-4a2a-934a-1b6806567e25"));
    assert_eq!(t.harness, "claude-code");
    assert_eq!(t.harness_version.as_deref(), Some("2.1.14"));
    assert_eq!(t.model.as_deref(), Some("claude-opus-4-5-20251101"));
    use Role::{Assistant as A, Environment as E, Tool as T, User as U};
    assert_eq!(roles(t), [U, A, T, A, T, A, E, A]);
    assert_eq!(calls(t), [("Write", "toolu_01R3SZZYuAq6mou5RqHE4rzF"), ("Bash", "toolu_01GNvoSEyj9jAsgFtJBduDPp")]);
    assert_eq!(t.steps[3].tool_calls[0].arguments["command"], "chmod +x /tmp/tmp74wiyiny/hello.sh && /tmp/tmp74wiyiny/hello.sh");
    let bash = t.result_of(CallRef { step: 3, call: 0 }).expect("the Bash call is answered");
    assert_eq!(bash.output, "Hello world");
    assert!(!bash.is_error);
    // The Stop-hook feedback (`isMeta`) is the environment talking, not the user.
    assert!(t.steps[6].text.starts_with("Stop hook feedback:"));
    assert!(t.steps[7].text.starts_with("I have fully completed the task."));
    assert_eq!(t.termination.kind, TerminationKind::AgentStoppedWithoutFinish);
    // Four API responses; each counted once although streamed over several lines.
    assert_eq!(t.usage.api_calls, Some(4));
    assert_eq!((t.usage.prompt_tokens, t.usage.completion_tokens, t.usage.cached_tokens), (Some(74_578), Some(29), Some(71_036)));
    assert_eq!(t.steps[1].tokens.as_ref().and_then(|k| k.prompt), Some(2 + 3173 + 15_289));
    assert_eq!(t.started_at.as_deref(), Some("2026-01-21T06:20:30.851Z"));
    assert!(t.unpaired_results.is_empty());
    // Spans point at the transcript lines.
    assert_eq!(t.steps.iter().map(|s| s.source_span.unwrap().line).collect::<Vec<_>>(), [2, 3, 4, 5, 6, 7, 8, 9]);
}

#[test]
fn real_session_with_parallel_calls_folds_results_hanging_off_each_call_line() {
    let Some(dir) = corpus("claude-code-session-jsonl") else { return };
    let (ts, _) = ingest(&[&dir.join("coverage-test-fix/transcript.jsonl")]);
    let t = &ts[0];
    let names: Vec<&str> = calls(t).iter().map(|(n, _)| *n).collect();
    assert_eq!(names, ["Glob", "Read", "Read", "Edit", "Edit", "Bash", "Bash", "Bash", "Glob", "Read", "Edit", "Bash", "Bash"]);
    // msg_017MmaKcDZ3XWAmy6PJZ86Ae was streamed as two lines, one Read each: one step.
    let reads = &t.steps[3];
    assert_eq!(reads.role, Role::Assistant);
    assert_eq!(reads.tool_calls.len(), 2);
    // The second result's line hangs off the first call's line, not the main chain; both are kept
    // and each answers its own call.
    assert_eq!(t.steps[4].tool_results[0].call, Some(CallRef { step: 3, call: 0 }));
    assert_eq!(t.steps[5].tool_results[0].call, Some(CallRef { step: 3, call: 1 }));
    assert!(t.calls().all(|(r, _)| t.result_of(r).is_some()), "all 13 calls answered");
    let errors: Vec<_> = t.steps.iter().flat_map(|s| &s.tool_results).filter(|r| r.is_error).collect();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].call_id.as_deref(), Some("toolu_01LZHfE3DNUh3HBws9z8uhN2"));
    assert_eq!(errors[0].exit_code, Some(1), "Exit code 1 read from the failed Bash result");
    assert!(errors[0].output.contains("nothing to commit"));
    assert_eq!(t.steps.iter().filter(|s| s.role == Role::Environment).count(), 2, "two Stop-hook feedbacks");
    assert_eq!(t.usage.api_calls, Some(14));
    assert_eq!(t.usage.completion_tokens, Some(158));
    assert_eq!(t.termination.kind, TerminationKind::AgentStoppedWithoutFinish);
    assert!(t.notes.iter().all(|n| !n.contains("branch")), "parallel results are not branches: {:?}", t.notes);
}

#[test]
fn real_sessions_all_ingest_with_their_session_ids() {
    let Some(dir) = corpus("claude-code-session-jsonl") else { return };
    let (ts, s) = ingest(&[&dir]);
    assert_eq!(ts.len(), 3);
    assert_eq!(s.quarantined_files(), 0);
    let t = by_task(&ts, "stop-hook-reflection-first-stop");
    assert_eq!(t.session_id.as_deref(), Some("cb88ae13-898d-4076-aeb5-bc37191c5d2e"));
    assert_eq!(calls(t).iter().map(|(n, _)| *n).collect::<Vec<_>>(), ["Read", "Edit", "Bash", "Bash"]);
    assert_eq!(t.usage.api_calls, Some(6));
    assert_eq!(t.usage.completion_tokens, Some(55));
    assert!(ts.iter().all(|t| t.unpaired_results.is_empty()));
}

#[test]
fn real_stream_json_declares_its_tools_and_ends_with_the_result() {
    let Some(dir) = corpus("claude-code-stream-json") else { return };
    let (ts, s) = ingest(&[&dir.join("sample-turns.json")]);
    assert_eq!(s.per_adapter.get("claude-code-stream"), Some(&1), "a JSON array of stream events");
    let t = &ts[0];
    assert_eq!(t.task_id, "sample-turns");
    assert_eq!(t.session_id.as_deref(), Some("sample-session-id"));
    assert_eq!(t.model.as_deref(), Some("claude-test-model"));
    let declared: Vec<&str> = t.declared_tools.as_ref().unwrap().iter().map(|d| d.name.as_str()).collect();
    assert_eq!(
        declared,
        [
            "Task",
            "Bash",
            "Read",
            "Edit",
            "Write",
            "mcp__github__get_file_contents",
            "mcp__github__create_or_update_file",
            "mcp__github__add_pull_request_review_comment"
        ]
    );
    assert_eq!(
        calls(t),
        [("Read", "tool_call_1"), ("Edit", "tool_call_2"), ("mcp__github__add_pull_request_review_comment", "tool_call_3")]
    );
    assert!(t.calls().all(|(r, _)| t.result_of(r).is_some_and(|x| !x.is_error)));
    assert_eq!(t.usage.cost_usd, Some(0.0347));
    assert_eq!(t.usage.wall_seconds, Some(18.75));
    assert_eq!((t.usage.prompt_tokens, t.usage.completion_tokens, t.usage.cached_tokens), (Some(945), Some(265), Some(315)));
    assert_eq!(t.termination.kind, TerminationKind::AgentStoppedWithoutFinish);
    // The result event has no subtype and is no error: the last reply's stop reason says how it ended.
    assert_eq!(t.signals.statuses[0].text, "result");
    assert_eq!((t.termination.raw.as_deref(), t.termination.rule.as_deref()), (Some("end_turn"), Some("claude-code-end-turn")));
    assert!(t.steps.last().unwrap().text.starts_with("Great! I've successfully completed"));
}

#[test]
fn the_real_tool_capture_is_a_registry_not_a_transcript() {
    let Some(dir) = corpus("claude-code-tools-capture") else { return };
    let path = dir.join("tools_2.1.144.json");
    let tools = tools_capture(&path, "tools_2.1.144.json").unwrap();
    assert_eq!(tools.len(), 47);
    assert_eq!(tools.iter().filter(|t| t.name.starts_with("mcp__stitch__")).count(), 14);
    assert_eq!(tools.iter().filter(|t| !t.name.starts_with("mcp__")).count(), 33);
    assert_eq!(tools[0].name, "Agent");
    assert!(tools[0].description.as_deref().unwrap().starts_with("Launch a new agent"));
    assert!(tools.iter().any(|t| t.name == "Bash") && tools.iter().any(|t| t.name == "Edit"));
    assert_eq!(tools[46].name, "mcp__stitch__upload_design_md");
    let (ts, s) = ingest(&[&path]);
    assert!(ts.is_empty());
    match &s.files[0].status {
        FileStatus::Skipped { reason } => assert!(reason.contains("tool registry capture") && reason.contains("tools-capture"), "{reason}"),
        other => panic!("expected skipped, got {other:?}"),
    }
}

#[test]
fn sample_session_with_sub_agent_file_unknown_tool_and_a_rewound_branch() {
    let dir = samples("claude-code/projects");
    let (ts, s) = ingest(&[&dir]);
    assert_eq!(ts.len(), 1, "the sub-agent transcript is read with its session");
    assert!(s.files.iter().filter(|f| matches!(f.status, FileStatus::Companion { .. })).count() == 2);
    let t = &ts[0];
    assert_eq!(t.task_id, "7d3e1f20-4b5a-4c6d-8e9f-0a1b2c3d4e5f");
    assert_eq!(t.harness_version.as_deref(), Some("2.0.37"));
    // The first message: a thinking block, text and two calls on four lines.
    let first = &t.steps[1];
    assert_eq!(first.text, "I'll read the parser and find the test first.");
    assert!(first.reasoning.as_ref().unwrap().text.as_deref().unwrap().starts_with("Intermittent failures"));
    assert_eq!(first.tool_calls.len(), 2);
    assert_eq!(first.tokens.as_ref().unwrap().completion, Some(118), "the largest count of the streamed lines");
    // An unknown tool: rejected by the harness.
    let (r, _) = t.calls().find(|(_, c)| c.name == "WebBrowse").unwrap();
    let rejected = t.result_of(r).unwrap();
    assert!(rejected.is_error);
    assert_eq!(rejected.unknown_tool.as_deref(), Some("Error: No such tool available: WebBrowse"));
    // The sub-agent's steps sit before the Task result that names it.
    let sub: Vec<usize> =
        t.steps.iter().enumerate().filter(|(_, s)| s.agent.as_deref() == Some("sidechain:a4f9c21")).map(|(i, _)| i).collect();
    assert_eq!(sub.len(), 4);
    let (task_ref, _) = t.calls().find(|(_, c)| c.name == "Task").unwrap();
    let task_result_step = t.steps.iter().position(|s| s.tool_results.iter().any(|r| r.call == Some(task_ref))).unwrap();
    assert_eq!(sub.last().copied(), Some(task_result_step - 1));
    assert_eq!(
        t.provenance.files.iter().map(|f| f.role.as_str()).collect::<Vec<_>>(),
        ["transcript", "subagent_meta", "subagent_transcript"]
    );
    assert_eq!(t.steps[sub[0]].source_span.unwrap().file, 2);
    assert!(t.notes.iter().any(|n| n == "sub-agent a4f9c21 is a general-purpose agent"));
    // The rewound branch ("Don't touch conftest.py.") is kept, labelled as a branch, and named.
    let branch: Vec<&coroner::model::Step> =
        t.steps.iter().filter(|s| s.agent.as_deref().is_some_and(|a| a.starts_with("branch:"))).collect();
    assert_eq!(branch.len(), 2, "both lines of the branch");
    assert!(branch[0].text.contains("Don't touch"));
    assert!(branch.iter().all(|s| s.agent == branch[0].agent), "one label for the branch");
    assert!(t.steps.iter().any(|s| s.agent.is_none() && s.text == "Good. Now run the whole suite."));
    assert!(t.notes.iter().any(|n| n.starts_with("branch from line 22 (2 line(s), forking at line 21)")), "{:?}", t.notes);
    let main_final = coroner::classify::mechanics::final_reply(t).unwrap();
    assert!(main_final.agent.is_none(), "the final reply is the main line's, never a branch's");
    // The retried API error is an environment step; the failing test run keeps its exit code.
    assert!(t.steps.iter().any(|s| s.role == Role::Environment && s.text.starts_with("API error (retried)")));
    assert!(t.steps.iter().flat_map(|s| &s.tool_results).any(|r| r.exit_code == Some(1) && r.output.contains("1 failed")));
    assert_eq!(t.termination.kind, TerminationKind::AgentStoppedWithoutFinish);
    assert_eq!(t.termination.raw.as_deref(), Some("end_turn"));
    assert!(t.notes.iter().any(|n| n == "summary line 1: Fix flaky date parser test"));
    assert!(t.unpaired_results.is_empty());
}

#[test]
fn sample_endings_name_the_budget_that_fired() {
    let (ts, _) = ingest(&[&samples("claude-code/prompt-too-long"), &samples("claude-code/v1-sidechain")]);
    let too_long = by_task(&ts, "prompt-too-long");
    assert_eq!((too_long.termination.budget, too_long.termination.enforced_by), (Some(Budget::Context), Some(Enforcer::Provider)));
    assert_eq!(too_long.termination.raw.as_deref(), Some("API Error: 400"));
    assert_eq!(too_long.usage.api_calls, Some(1), "the synthetic error message made no model call");

    let v1 = by_task(&ts, "v1-sidechain");
    assert_eq!(v1.harness_version.as_deref(), Some("1.0.51"));
    assert_eq!((v1.termination.budget, v1.termination.raw.as_deref()), (Some(Budget::OutputTokens), Some("max_tokens")));
    let side: Vec<&str> = v1.steps.iter().filter_map(|s| s.agent.as_deref()).collect();
    assert_eq!(side, ["sidechain:f0000000-0000-4000-8000-000000000003"; 4], "an in-file sidechain without agentId takes its root uuid");
    assert_eq!(v1.usage.cost_usd, Some(0.0123 * 4.0));
    assert!(v1.calls().all(|(r, _)| v1.result_of(r).is_some()));
}

#[test]
fn stream_json_results_map_to_budgets_and_harness_errors() {
    let (ts, _) = ingest(&[&samples("claude-code/stream")]);
    let turns = by_task(&ts, "max-turns");
    assert_eq!((turns.termination.budget, turns.termination.enforced_by), (Some(Budget::Steps), Some(Enforcer::Harness)));
    assert_eq!(turns.termination.consumed, Some(4.0));
    assert_eq!(turns.termination.rule.as_deref(), Some("claude-code-max-turns"));
    assert_eq!(turns.harness_version.as_deref(), Some("2.0.30"));
    assert_eq!(turns.declared_tools.as_ref().map(Vec::len), Some(17));
    assert!(turns.notes.iter().any(|n| n == "MCP servers not connected at start: linear"));
    assert_eq!(turns.steps[0].text, "Let me find where the retry limit is configured.");
    assert_eq!(turns.steps[0].tool_calls[0].name, "Grep");

    let budget = by_task(&ts, "budget-subagent");
    assert_eq!(budget.termination.budget, Some(Budget::Cost));
    assert_eq!(budget.termination.consumed, Some(0.5213));
    assert_eq!(budget.steps.iter().filter(|s| s.agent.as_deref() == Some("sidechain:toolu_21T")).count(), 4);
    let failed = budget.steps.iter().flat_map(|s| &s.tool_results).find(|r| r.is_error).unwrap();
    assert_eq!(failed.exit_code, Some(1));

    let crashed = by_task(&ts, "execution-error");
    assert_eq!(crashed.termination.kind, TerminationKind::HarnessError);
    assert_eq!(crashed.termination.detail.as_deref(), Some("Error: spawn /bin/sh ENOENT"));
}

/// The real transcript with one line replaced.
fn with_line(path: &std::path::Path, lineno: usize, replacement: &str) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .enumerate()
        .map(|(i, l)| if i + 1 == lineno { replacement.to_string() } else { l.to_string() })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

#[test]
fn a_broken_line_costs_that_line_only() {
    let Some(dir) = corpus("claude-code-session-jsonl") else { return };
    let real = dir.join("hello-world-script/transcript.jsonl");
    let tmp = tempdir();
    let run = tmp.path().join("run");
    std::fs::create_dir_all(run.join("cut")).unwrap();
    // Line 5 (the Bash call) cut in the middle of a string.
    let original = std::fs::read_to_string(&real).unwrap();
    let line5 = original.lines().nth(4).unwrap();
    std::fs::write(run.join("cut/transcript.jsonl"), with_line(&real, 5, &line5[..200])).unwrap();
    let (ts, s) = ingest(&[&run]);
    assert_eq!(ts.len(), 1);
    assert_eq!(s.quarantined_records, 1);
    let d = &s.diagnostics[0];
    assert_eq!((d.line, d.kind), (Some(5), InputErrorKind::Truncated));
    let t = &ts[0];
    assert_eq!(calls(t), [("Write", "toolu_01R3SZZYuAq6mou5RqHE4rzF")], "the good lines are kept");
    assert_eq!(t.unpaired_results.len(), 1, "the Bash result lost its call and is kept, unpaired");
    assert!(t.notes.iter().any(|n| n.contains("parent uuid(s) are not in the file")));
    assert!(t.steps.last().unwrap().text.starts_with("I have fully completed the task."), "the main line continues past the gap");

    // The CLI reports it at its line and exits 3.
    let out = coroner_in(tmp.path(), &["ingest", "run", "-o", "out.jsonl"]);
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("run/cut/transcript.jsonl:5"), "{stderr}");
    assert_eq!(std::fs::read_to_string(tmp.path().join("out.jsonl")).unwrap().lines().count(), 1);
}

#[test]
fn bad_transcripts_are_reported_with_file_and_line() {
    let Some(dir) = corpus("claude-code-session-jsonl") else { return };
    let real = dir.join("hello-world-script/transcript.jsonl");
    let tmp = tempdir();
    let d = tmp.path();
    // A field of the wrong type on line 4 (message.content a number).
    let wrong = r#"{"parentUuid":"abc3ef77-fd9b-4edb-acce-b865ad94cb48","isSidechain":false,"sessionId":"de3b8b19-5bc0-4a2a-934a-1b6806567e25","type":"user","message":{"role":"user","content":42},"uuid":"8dd71141-ca3a-4b8a-8d4c-b7d2e4e65e3b"}"#;
    std::fs::create_dir_all(d.join("wrong")).unwrap();
    std::fs::write(d.join("wrong/transcript.jsonl"), with_line(&real, 4, wrong)).unwrap();
    // Invalid UTF-8 in the prompt, moved to line 3 by a 70 KB snapshot line: bad bytes inside
    // the first 64 KB make detection call the whole file binary, after them they cost one line.
    std::fs::create_dir_all(d.join("utf8")).unwrap();
    let mut bytes = Vec::new();
    for (i, l) in std::fs::read_to_string(&real).unwrap().lines().enumerate() {
        if i == 1 {
            let pad = "x".repeat(70_000);
            bytes.extend_from_slice(
                format!("{{\"type\":\"file-history-snapshot\",\"messageId\":\"m\",\"snapshot\":{{\"pad\":\"{pad}\"}}}}\n").as_bytes(),
            );
            bytes.extend_from_slice(&l.as_bytes()[..60]);
            bytes.extend_from_slice(b"\xff\xfe");
            bytes.extend_from_slice(&l.as_bytes()[60..]);
        } else {
            bytes.extend_from_slice(l.as_bytes());
        }
        bytes.push(b'\n');
    }
    std::fs::write(d.join("utf8/transcript.jsonl"), bytes).unwrap();
    // Every line bad: the file is quarantined.
    std::fs::create_dir_all(d.join("allbad")).unwrap();
    std::fs::write(
        d.join("allbad/transcript.jsonl"),
        "{\"sessionId\": \"s\", \"parentUuid\": null, \"type\": \"user\", \"message\": {\"content\": 1}}\n{\"sessionId\": \"s\",\n",
    )
    .unwrap();
    let (ts, s) = ingest(&[d]);
    assert_eq!(ts.len(), 2);
    let diag = |dir: &str| s.diagnostics.iter().filter(|x| x.path.contains(&format!("{dir}/"))).collect::<Vec<_>>();
    let w = diag("wrong");
    assert_eq!((w.len(), w[0].line, w[0].kind), (1, Some(4), InputErrorKind::Schema));
    let u = diag("utf8");
    assert_eq!((u.len(), u[0].line, u[0].kind), (1, Some(3), InputErrorKind::InvalidUtf8));
    let utf8 = ts.iter().find(|t| t.provenance.files[0].path.contains("utf8/")).unwrap();
    assert_eq!(utf8.steps[0].role, Role::Assistant, "the prompt on line 3 is gone, the rest stays");
    assert_eq!(utf8.steps.len(), 7);
    let bad = s.files.iter().find(|f| f.display.contains("allbad/")).unwrap();
    assert!(matches!(bad.status, FileStatus::Quarantined { .. }), "{:?}", bad.status);
    assert_eq!(diag("allbad").len(), 3, "two bad lines and the file");
}

#[test]
fn a_verdict_file_joins_by_session_id_or_task_id() {
    use coroner::ingest::IngestOptions;
    use coroner::model::OutcomeStatus;
    let Some(dir) = corpus("claude-code-session-jsonl") else { return };
    let tmp = tempdir();
    let verdicts = tmp.path().join("verdicts.csv");
    // One row keyed by a session id, one by a task id (the directory of a `transcript.jsonl`).
    std::fs::write(&verdicts, "task_id,outcome\nde3b8b19-5bc0-4a2a-934a-1b6806567e25,passed\ncoverage-test-fix,failed\n").unwrap();
    let (ts, _) = crate::common::ingest_with(IngestOptions { inputs: vec![dir], verdicts: vec![verdicts], ..IngestOptions::default() });
    assert_eq!(by_task(&ts, "hello-world-script").outcome.status, OutcomeStatus::Passed);
    assert_eq!(by_task(&ts, "coverage-test-fix").outcome.status, OutcomeStatus::Failed);
    assert_eq!(by_task(&ts, "stop-hook-reflection-first-stop").outcome.status, OutcomeStatus::Unknown);
}
