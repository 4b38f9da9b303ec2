//! Gemini CLI chat sessions (real corpus), the JSONL record stream, headless JSON and text output.

use coroner::ingest::{FileStatus, IngestOptions, InputErrorKind};
use coroner::model::{Budget, Enforcer, Role, TerminationKind};

use crate::common::{by_task, corpus, ingest, ingest_with, samples, tempdir};

#[test]
fn real_sessions_give_steps_paired_results_thoughts_and_tokens() {
    let Some(dir) = corpus("gemini-cli") else { return };
    let (ts, s) = ingest(&[&dir]);
    assert_eq!(ts.len(), 3);
    assert_eq!(s.per_adapter.get("gemini-cli"), Some(&3));
    assert!(ts.iter().all(|t| t.model.as_deref() == Some("gemini-2.5-pro") && t.unpaired_results.is_empty()));
    // Each session ends on a reply without tool calls: the turn ended, no finish protocol.
    assert!(ts.iter().all(|t| t.termination.kind == TerminationKind::AgentStoppedWithoutFinish));

    let edit = by_task(&ts, "453aa339-7d2b-4709-a41a-b0b73beaff85");
    assert_eq!(edit.session_id.as_deref(), Some("453aa339-7d2b-4709-a41a-b0b73beaff85"));
    assert_eq!(edit.steps.len(), 8);
    let names: Vec<&str> = edit.calls().map(|(_, c)| c.name.as_str()).collect();
    assert_eq!(names, ["read_file", "replace", "read_file"]);
    let (replace_ref, replace) = edit.calls().nth(1).unwrap();
    assert_eq!(replace.id.as_deref(), Some("replace-1761734228885-7a63ed9561c45"));
    assert_eq!(replace.arguments["new_string"], "Goodbye from Gemini CLI");
    assert_eq!(
        edit.result_of(replace_ref).unwrap().output,
        "Successfully modified file: /private/tmp/gemini-test/created.txt (1 replacements)."
    );
    assert_eq!(edit.steps.last().unwrap().text, "Done.");
    assert_eq!(edit.usage.prompt_tokens, Some(5367 + 5393 + 5454 + 5480));
    assert_eq!(edit.usage.reasoning_tokens, Some(244 + 151 + 43 + 48));
    assert_eq!(edit.usage.api_calls, Some(4));
    let first = &edit.steps[1];
    assert!(first.reasoning.as_ref().unwrap().text.as_deref().unwrap().starts_with("Initiating File Operations: "));
    assert_eq!(first.reasoning.as_ref().unwrap().tokens, Some(244));
    assert_eq!(edit.started_at.as_deref(), Some("2025-10-29T10:37:00.099Z"));

    let long = by_task(&ts, "981c87cb-90ef-4c7f-948d-23173ff43e4e");
    assert_eq!(long.steps.len(), 31);
    assert_eq!(long.steps.iter().filter(|s| s.role == Role::User).count(), 3);
    let results: Vec<_> = long.steps.iter().flat_map(|s| &s.tool_results).collect();
    assert_eq!(results.len(), 13);
    // status "cancelled" and "error" results are errors; the shell reports its own exit code.
    let cancelled = results.iter().find(|r| r.output.starts_with("[Operation Cancelled]")).unwrap();
    assert!(cancelled.is_error);
    let relative = results.iter().find(|r| r.output == "Path must be absolute: .").unwrap();
    assert!(relative.is_error && relative.unknown_tool.is_none());
    let pip = results.iter().find(|r| r.output.starts_with("Command: pip install RestrictedPython")).unwrap();
    assert_eq!((pip.exit_code, pip.is_error), (Some(127), false));
    assert_eq!(long.calls().filter(|(_, c)| c.name == "run_shell_command").count(), 5);
}

#[test]
fn sample_session_unknown_tool_and_an_api_error_at_the_end() {
    let (ts, s) = ingest(&[&samples("gemini-cli")]);
    assert_eq!(s.quarantined_files(), 0);
    let t = by_task(&ts, "5f0c2a9e-1b7d-4c3e-9a2f-6d8e0b1c4a77");
    let rejected = t.steps.iter().flat_map(|s| &s.tool_results).find(|r| r.unknown_tool.is_some()).unwrap();
    assert_eq!(
        rejected.unknown_tool.as_deref(),
        Some(
            "Tool \"search_files\" not found in registry. Tools must use the exact names that are registered. Did you mean one of: \"search_file_content\", \"read_many_files\"?"
        )
    );
    assert_eq!(t.steps[rejected.call.unwrap().step as usize].tool_calls[0].name, "search_files");
    assert_eq!(t.termination.kind, TerminationKind::Infrastructure);
    // The error message that closed the session, recognized as the provider's rate limit.
    assert!(t.termination.raw.as_deref().unwrap().contains("429 Too Many Requests"));
    assert_eq!(t.termination.source.as_deref(), Some("messages[type=error].content"));
    assert_eq!(t.termination.rule.as_deref(), Some("provider-rate-limit"));

    // The JSONL stream: a replaced message keeps its place, a rewind drops what followed.
    let j = by_task(&ts, "0d3e5f70-2a4b-4c6d-8e0f-1a2b3c4d5e6f");
    assert_eq!(j.provenance.format_version.as_deref(), Some("gemini-cli session jsonl"));
    let texts: Vec<&str> = j.steps.iter().filter(|s| s.role == Role::Assistant).map(|s| s.text.as_str()).collect();
    assert_eq!(texts, ["I'll look at util.py.", "", "Renamed foo to bar."]);
    assert_eq!(j.calls().map(|(_, c)| c.name.as_str()).collect::<Vec<_>>(), ["read_file", "replace"]);
    assert_eq!(j.ended_at.as_deref(), Some("2026-05-02T14:00:11.000Z"));

    let h = by_task(&ts, "7a9c1e3f-5b7d-4f9a-8c2e-4b6d8f0a2c4e");
    assert_eq!(h.provenance.adapter, "gemini-cli-headless");
    assert_eq!((h.usage.prompt_tokens, h.usage.completion_tokens, h.usage.api_calls), (Some(61_200), Some(1_480), Some(6)));
    assert!(h.notes.iter().any(|n| n.contains("run_shell_command x2 (1 failed)")));

    // stream-json: deltas join into one reply; an unregistered name fails with tool_not_registered.
    let st = by_task(&ts, "c2f1a7d4-3b9e-4e5a-9f1c-7d2b8a6e4f30");
    assert_eq!(st.provenance.adapter, "gemini-cli-stream");
    assert_eq!(st.steps[1].text, "I'll look at the parser first.");
    assert_eq!(st.calls().map(|(_, c)| c.name.as_str()).collect::<Vec<_>>(), ["find_files", "run_shell_command"]);
    let r = st.steps.iter().flat_map(|s| &s.tool_results).next().unwrap();
    assert_eq!(
        r.unknown_tool.as_deref(),
        Some("Tool \"find_files\" not found in registry. Tools must use the exact names that are registered. Did you mean \"glob\"?")
    );
    assert_eq!(st.steps.iter().flat_map(|s| &s.tool_results).nth(1).unwrap().exit_code, Some(1));
    assert!(st.unpaired_results.is_empty());
    assert_eq!((st.termination.budget, st.termination.raw.as_deref()), (Some(Budget::Steps), Some("FatalTurnLimitedError")));
    assert_eq!((st.usage.prompt_tokens, st.usage.wall_seconds), (Some(15_000), Some(30.1)));

    // Plain text is not guessed; with --format its tool errors become rejected calls.
    assert!(s.files.iter().any(|f| f.display.ends_with("headless-run.txt") && matches!(f.status, FileStatus::Skipped { .. })));
    let (ts, _) = ingest_with(IngestOptions {
        inputs: vec![samples("gemini-cli/headless-run.txt")],
        format: Some("gemini-cli-headless".into()),
        ..IngestOptions::default()
    });
    let r = ts[0].steps.iter().flat_map(|s| &s.tool_results).next().unwrap();
    assert_eq!(
        r.unknown_tool.as_deref(),
        Some(
            "Tool \"list_files\" not found in registry. Tools must use the exact names that are registered. Did you mean \"list_directory\"?"
        )
    );
    assert!(ts[0].steps.last().unwrap().text.starts_with("The project has three modules"));
    assert_eq!(ts[0].termination.kind, TerminationKind::AgentStoppedWithoutFinish);
}

#[test]
fn headless_runs_cut_by_the_turn_limit_or_an_error() {
    let dir = tempdir();
    let text = dir.path().join("run.txt");
    std::fs::write(&text, "I read the parser and started on the fix.\n\n Reached max session turns for this session. Increase the number of turns by specifying maxSessionTurns in settings.json.\n").unwrap();
    let (ts, _) = ingest_with(IngestOptions { inputs: vec![text], format: Some("gemini-cli-headless".into()), ..IngestOptions::default() });
    assert_eq!((ts[0].termination.kind, ts[0].termination.budget), (TerminationKind::Budget, Some(Budget::Steps)));
    assert_eq!(ts[0].termination.rule.as_deref(), Some("gemini-max-session-turns-log"));

    std::fs::write(
        dir.path().join("out.json"),
        r#"{"session_id": "s9", "error": {"type": "FatalAuthenticationError", "message": "Failed to login.", "code": 41}}"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("timeout.json"),
        r#"{"session_id": "s10", "error": {"type": "Error", "message": "Request timed out after 120 seconds"}}"#,
    )
    .unwrap();
    let (ts, _) = ingest(&[&dir.path().join("out.json"), &dir.path().join("timeout.json")]);
    let auth = by_task(&ts, "s9");
    assert_eq!(
        (auth.termination.kind, auth.termination.raw.as_deref()),
        (TerminationKind::Infrastructure, Some("FatalAuthenticationError"))
    );
    // A caller's per-request timeout is the caller's wall-clock budget (DESIGN, hard cases).
    let timeout = by_task(&ts, "s10");
    assert_eq!((timeout.termination.budget, timeout.termination.enforced_by), (Some(Budget::WallTime), Some(Enforcer::Caller)));
}

#[test]
fn bad_sessions_report_file_and_line() {
    let dir = tempdir();
    std::fs::write(
        dir.path().join("session-cut.json"),
        "{\n  \"sessionId\": \"s1\",\n  \"projectHash\": \"p\",\n  \"messages\": [\n    {\"id\": \"a\", \"type\": \"user\", \"content\": \"hi\"},\n    {\"id\": \"b\", \"type\": \"gem",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("session-bad.json"),
        "{\n  \"sessionId\": \"s2\",\n  \"projectHash\": \"p\",\n  \"messages\": [\n    {\"id\": \"a\", \"type\": \"gemini\", \"content\": \"x\", \"toolCalls\": {\"name\": 3}}\n  ]\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("session-stream.jsonl"),
        "{\"sessionId\": \"s3\", \"projectHash\": \"p\"}\n{\"id\": \"a\", \"type\": \"user\", \"content\": \"hi\"}\n{\"id\": \"b\", \"type\": \n{\"id\": \"c\", \"type\": \"gemini\", \"content\": \"ok\"}\n",
    )
    .unwrap();
    // A legacy session converted to the stream: its first line is the whole old record.
    std::fs::write(
        dir.path().join("session-legacy.jsonl"),
        "{\"sessionId\": \"s4\", \"projectHash\": \"p\", \"messages\": [{\"id\": \"a\", \"type\": \"user\", \"content\": \"hi\"}]}\n{\"id\": \"b\", \"type\": \"gemini\", \"content\": \"hello\"}\n",
    )
    .unwrap();
    let (ts, s) = ingest(&[dir.path()]);
    let legacy = ts.iter().find(|t| t.task_id == "s4").unwrap();
    assert_eq!(legacy.steps.iter().map(|s| s.text.as_str()).collect::<Vec<_>>(), ["hi", "hello"]);
    let status = |n: &str| &s.files.iter().find(|f| f.display.ends_with(n)).unwrap().status;
    assert!(matches!(status("session-cut.json"), FileStatus::Quarantined { kind: InputErrorKind::Truncated }));
    assert!(matches!(status("session-bad.json"), FileStatus::Quarantined { kind: InputErrorKind::Schema }));
    let line = |n: &str| s.diagnostics.iter().find(|d| d.path.ends_with(n)).unwrap().line;
    assert_eq!(line("session-cut.json"), Some(6));
    assert_eq!(line("session-bad.json"), Some(5));
    // One bad line of the stream costs that line.
    assert_eq!(line("session-stream.jsonl"), Some(3));
    let stream = ts.iter().find(|t| t.task_id == "s3").unwrap();
    assert_eq!(stream.steps.len(), 2);
    assert_eq!(s.quarantined_records, 1);
}
