//! Codex CLI rollouts (real 0.40 corpus, newer and pre-RolloutLine samples) and `codex exec
//! --json` streams (real and samples of each era), with broken lines.

use coroner::ingest::{FileStatus, InputErrorKind};
use coroner::model::{Budget, Enforcer, Role, TerminationKind, Trajectory};

use crate::common::{by_task, coroner_in, corpus, ingest, samples, tempdir};

const ROLLOUT_1: &str = "rollout-2025-09-25T08-02-05-0199812e-64f0-7f73-91fc-095dda01c36e.jsonl";
const ROLLOUT_2: &str = "rollout-2025-09-25T15-12-14-019982b8-3422-79e0-8b3b-05abaf4f3c3e.jsonl";

fn results(t: &Trajectory) -> Vec<&coroner::model::ToolResult> {
    t.steps.iter().flat_map(|s| &s.tool_results).collect()
}

#[test]
fn real_rollout_pairs_shell_calls_with_their_json_outputs() {
    let Some(dir) = corpus("codex-rollout-jsonl") else { return };
    let (ts, s) = ingest(&[&dir.join(ROLLOUT_2)]);
    assert_eq!(s.per_adapter.get("codex"), Some(&1));
    let t = &ts[0];
    assert_eq!(t.task_id, "019982b8-3422-79e0-8b3b-05abaf4f3c3e", "Codex's own file name gives way to the session id");
    assert_eq!(t.session_id.as_deref(), Some("019982b8-3422-79e0-8b3b-05abaf4f3c3e"));
    assert_eq!(t.harness_version.as_deref(), Some("0.40.0"));
    assert_eq!(t.model.as_deref(), Some("gpt-5-codex"));
    assert_eq!(t.calls().count(), 34);
    assert!(t.calls().all(|(_, c)| c.name == "shell"));
    let (first_ref, first) = t.calls().next().unwrap();
    assert_eq!(first.id.as_deref(), Some("call_mux7Gp4q9YON9fYffwerwHgr"));
    assert_eq!(first.arguments["command"], serde_json::json!(["bash", "-lc", "ls"]), "arguments are JSON inside a string");
    let out = t.result_of(first_ref).unwrap();
    assert!(out.output.starts_with("CLAUDE.md\nREADME.md\napps\n"), "the output inside the output JSON");
    assert_eq!(out.exit_code, Some(0));
    assert!(t.calls().all(|(r, _)| t.result_of(r).is_some_and(|x| x.exit_code == Some(0) && !x.is_error)));
    assert_eq!(t.steps.iter().filter(|s| s.role == Role::User).count(), 1);
    assert_eq!(t.steps[0].role, Role::Environment, "<environment_context> is the harness talking");
    // Reasoning summaries attach to the step of their response, with that response's tokens.
    let s1 = &t.steps[2];
    assert_eq!(s1.reasoning.as_ref().unwrap().text.as_deref(), Some("**Evaluating repo structure and planning**"));
    let k = s1.tokens.as_ref().unwrap();
    assert_eq!((k.prompt, k.completion, k.cached, k.reasoning), (Some(2899), Some(100), Some(2560), Some(64)));
    let last = t.steps.last().unwrap();
    assert!(last.text.starts_with("**Findings**"));
    assert_eq!(t.termination.kind, TerminationKind::AgentStoppedWithoutFinish);
    // The last token_count's totals.
    assert_eq!(
        (t.usage.prompt_tokens, t.usage.cached_tokens, t.usage.completion_tokens, t.usage.reasoning_tokens),
        (Some(536_834), Some(472_320), Some(6654), Some(4096))
    );
    assert_eq!(t.started_at.as_deref(), Some("2025-09-25T21:12:14.126Z"));
}

#[test]
fn real_rollout_with_sandbox_refusals_and_a_second_turn() {
    let Some(dir) = corpus("codex-rollout-jsonl") else { return };
    let (ts, _) = ingest(&[&dir.join(ROLLOUT_1)]);
    let t = &ts[0];
    assert_eq!(t.calls().count(), 57);
    let failed: Vec<_> = results(t).into_iter().filter(|r| r.is_error).collect();
    assert_eq!(failed.len(), 12, "outputs that are plain sandbox refusals");
    assert!(failed.iter().all(|r| r.output.starts_with("failed in sandbox MacosSeatbelt")));
    assert_eq!(failed.iter().filter(|r| r.exit_code == Some(2)).count(), 1);
    assert_eq!(failed.iter().filter(|r| r.exit_code == Some(1)).count(), 11);
    assert_eq!(failed[0].call_id.as_deref(), Some("call_seIZJjIFE0kNJnex4BMas2nf"));
    assert!(t.unpaired_results.is_empty());
    assert_eq!(t.steps.iter().filter(|s| s.role == Role::User).count(), 2, "two user turns");
    assert!(t.steps.last().unwrap().text.starts_with("- **Scope Targets**"));
    // The token counter restarted with the second turn; both segments are counted.
    assert_eq!(t.usage.prompt_tokens, Some(1_355_071 + 37_208));
}

#[test]
fn real_exec_streams_read_items_and_turn_usage() {
    let Some(dir) = corpus("codex-exec-json") else { return };
    let (ts, s) = ingest(&[&dir]);
    assert_eq!(s.per_adapter.get("codex-exec"), Some(&2));
    let t = by_task(&ts, "stream-output-4");
    assert_eq!(t.session_id.as_deref(), Some("019a2d7b-231d-7290-acc1-6bc6571440da"));
    let calls: Vec<(&str, Option<&str>)> = t.calls().map(|(_, c)| (c.name.as_str(), c.id.as_deref())).collect();
    assert_eq!(calls, [("shell", Some("item_1"))]);
    let (r, call) = t.calls().next().unwrap();
    assert_eq!(call.arguments["command"], "bash -lc 'cat test.js'");
    let out = t.result_of(r).unwrap();
    assert_eq!((out.output.as_str(), out.exit_code, out.is_error), ("console.log('Hello World');\n", Some(0), false));
    assert_eq!(t.steps[0].reasoning.as_ref().unwrap().text.as_deref(), Some("**Preparing to read file with bash shell**"));
    assert!(t.steps.last().unwrap().text.starts_with("`test.js` simply contains"));
    assert_eq!((t.usage.prompt_tokens, t.usage.cached_tokens, t.usage.completion_tokens), (Some(6087), Some(5120), Some(204)));
    assert_eq!((t.termination.kind, t.termination.raw.as_deref()), (TerminationKind::AgentStoppedWithoutFinish, Some("turn.completed")));

    let t5 = by_task(&ts, "stream-output-5");
    let out = t5.result_of(t5.calls().next().unwrap().0).unwrap();
    assert!(out.output.contains("hello.txt") && out.exit_code == Some(0));
    assert_eq!(t5.usage.completion_tokens, Some(223));
}

#[test]
fn newer_rollout_sample_patches_rejects_an_unknown_tool_and_is_interrupted() {
    let (ts, _) = ingest(&[&samples("codex/sessions")]);
    let t = &ts[0];
    assert_eq!(t.task_id, "019a0b1c-2d3e-7f40-8a5b-6c7d8e9f0a1b");
    assert_eq!(t.harness_version.as_deref(), Some("0.47.0"));
    let names: Vec<&str> = t.calls().map(|(_, c)| c.name.as_str()).collect();
    assert_eq!(names, ["shell", "apply_patch", "browser_open", "local_shell"]);
    assert_eq!(t.steps[0].role, Role::System, "<user_instructions> (AGENTS.md)");
    let patch = t.calls().find(|(_, c)| c.name == "apply_patch").unwrap();
    assert!(patch.1.arguments["input"].as_str().unwrap().starts_with("*** Begin Patch"));
    assert_eq!(t.result_of(patch.0).unwrap().exit_code, Some(0));
    let rejected = t.result_of(t.calls().find(|(_, c)| c.name == "browser_open").unwrap().0).unwrap();
    assert_eq!(rejected.unknown_tool.as_deref(), Some("unsupported call: browser_open"));
    // The exit code comes from exec_command_end; the output alone has none.
    let tests = t.result_of(t.calls().find(|(_, c)| c.name == "local_shell").unwrap().0).unwrap();
    assert_eq!((tests.exit_code, tests.is_error), (Some(1), true));
    assert_eq!((t.termination.source.as_deref(), t.termination.raw.as_deref()), (Some("turn_aborted.reason"), Some("interrupted")));
    assert_eq!(t.termination.rule.as_deref(), Some("codex-turn-interrupted"));
    assert_eq!(t.termination.kind, TerminationKind::Unknown);
    assert_eq!(t.usage.prompt_tokens, Some(18_790));
    // Newer rollouts count after the items: the count lands on the step it measures.
    assert_eq!(t.steps[5].tokens.as_ref().unwrap().completion, Some(244));
}

#[test]
fn legacy_rollout_and_context_window_end() {
    let (ts, _) = ingest(&[&samples("codex/legacy"), &samples("codex/context-window.jsonl")]);
    let legacy = by_task(&ts, "5f1d2c3b-8a9e-4b7c-9d0e-1f2a3b4c5d6e");
    assert_eq!(legacy.provenance.format_version.as_deref(), Some("codex-rollout-legacy"));
    let out = legacy.result_of(legacy.calls().next().unwrap().0).unwrap();
    assert!(out.is_error, "an {{content, success: false}} output");
    assert!(out.output.contains("--- FAIL: TestParse"));
    assert_eq!(legacy.termination.kind, TerminationKind::AgentStoppedWithoutFinish);
    assert!(legacy.notes.iter().any(|n| n.contains("3 × record_type")), "{:?}", legacy.notes);

    let full = by_task(&ts, "context-window");
    assert_eq!((full.termination.budget, full.termination.enforced_by), (Some(Budget::Context), Some(Enforcer::Provider)));
    assert_eq!(full.termination.limit, Some(272_000.0), "the rollout's model_context_window");
    let (_, call) = full.calls().next().unwrap();
    assert_eq!(call.name, "shell_command");
    let r = full.result_of(full.calls().next().unwrap().0).unwrap();
    assert_eq!(r.exit_code, Some(0), "`Exit code: 0` of the formatted output");
}

#[test]
fn exec_samples_of_every_era() {
    let (ts, _) = ingest(&[&samples("codex/exec")]);
    let fail = by_task(&ts, "fix-parser");
    let names: Vec<&str> = fail.calls().map(|(_, c)| c.name.as_str()).collect();
    assert_eq!(names, ["update_plan", "shell", "apply_patch", "github__create_issue", "web_search"]);
    let plan = fail.calls().find(|(_, c)| c.name == "update_plan").unwrap().1;
    assert_eq!(plan.arguments["plan"][0]["completed"], true, "the todo list as last updated");
    let shell = fail.result_of(fail.calls().find(|(_, c)| c.name == "shell").unwrap().0).unwrap();
    assert_eq!((shell.exit_code, shell.is_error), (Some(1), true));
    let mcp = fail.result_of(fail.calls().find(|(_, c)| c.name == "github__create_issue").unwrap().0).unwrap();
    assert!(mcp.is_error && mcp.output.contains("403"));
    assert_eq!(fail.termination.kind, TerminationKind::Infrastructure, "turn.failed: stream disconnected");
    assert!(fail.steps.iter().any(|s| s.role == Role::Environment && s.text == "error: command output truncated to 10 KiB"));

    let old = by_task(&ts, "count-files");
    assert_eq!(old.steps.last().unwrap().text, "There are 7 entries in the directory.", "assistant_message with item_type");
    assert_eq!(old.result_of(old.calls().next().unwrap().0).unwrap().output, "7\n");

    let legacy = by_task(&ts, "legacy-events");
    assert_eq!(legacy.provenance.format_version.as_deref(), Some("codex-exec-json-legacy"));
    assert_eq!(legacy.steps[0].text, "Rename the package util to strutil.");
    let names: Vec<&str> = legacy.calls().map(|(_, c)| c.name.as_str()).collect();
    assert_eq!(names, ["shell", "apply_patch", "shell"]);
    let build = legacy.result_of(legacy.calls().nth(2).unwrap().0).unwrap();
    assert_eq!((build.exit_code, build.is_error), (Some(1), true));
    assert_eq!(legacy.termination.raw.as_deref(), Some("task_complete"));
    assert_eq!((legacy.usage.prompt_tokens, legacy.usage.completion_tokens), (Some(13_400), Some(305)));
    assert_eq!(legacy.model.as_deref(), Some("gpt-5"));
}

#[test]
fn a_broken_rollout_line_costs_that_line_only() {
    let Some(dir) = corpus("codex-rollout-jsonl") else { return };
    let text = std::fs::read_to_string(dir.join(ROLLOUT_2)).unwrap();
    let tmp = tempdir();
    let run = tmp.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    let mut lines: Vec<String> = text.lines().map(ToString::to_string).collect();
    // Line 10 (the first output) cut; line 15 (the second call) with a payload that is not an
    // object.
    lines[9].truncate(120);
    lines[14] = r#"{"timestamp":"2025-09-25T21:12:20.000Z","type":"response_item","payload":"oops"}"#.into();
    std::fs::write(run.join(ROLLOUT_2), lines.join("\n") + "\n").unwrap();
    let (ts, s) = ingest(&[&run]);
    assert_eq!(ts.len(), 1);
    assert_eq!(s.quarantined_records, 2);
    let lines_kinds: Vec<(Option<usize>, InputErrorKind)> = s.diagnostics.iter().map(|d| (d.line, d.kind)).collect();
    assert_eq!(lines_kinds, [(Some(10), InputErrorKind::Truncated), (Some(15), InputErrorKind::Schema)]);
    let t = &ts[0];
    assert_eq!(t.calls().count(), 33, "34 calls less the one on line 15");
    assert_eq!(t.unpaired_results.len(), 1, "the output of the lost call is kept, unpaired");
    assert_eq!(t.calls().filter(|(r, _)| t.result_of(*r).is_none()).count(), 1, "the call whose output was cut");
    let out = coroner_in(tmp.path(), &["ingest", "run", "-o", "out.jsonl"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("{ROLLOUT_2}:10")));
}

#[test]
fn broken_exec_streams_are_reported_with_their_line() {
    let Some(dir) = corpus("codex-exec-json") else { return };
    let text = std::fs::read_to_string(dir.join("stream-output-4.jsonl")).unwrap();
    let tmp = tempdir();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[3] = r#"{"type":"item.started","item":["not","an","object"]}"#;
    std::fs::write(tmp.path().join("one-bad.jsonl"), lines.join("\n") + "\n").unwrap();
    std::fs::write(tmp.path().join("all-bad.jsonl"), "{\"type\":\"thread.started\",\n{\"type\": }\n").unwrap();
    let (ts, s) = ingest(&[tmp.path()]);
    assert_eq!(ts.len(), 1);
    let d = s.diagnostics.iter().find(|d| d.path.ends_with("one-bad.jsonl")).unwrap();
    assert_eq!((d.line, d.kind), (Some(4), InputErrorKind::Schema));
    assert_eq!(ts[0].calls().count(), 1, "the completed item still makes the call");
    let all = s.files.iter().find(|f| f.display.ends_with("all-bad.jsonl")).unwrap();
    assert!(matches!(all.status, FileStatus::Quarantined { .. }), "{:?}", all.status);
}

#[test]
fn a_verdict_file_joins_a_rollout_by_its_file_name() {
    let tmp = tempdir();
    let dir = samples("codex/sessions");
    let name = "rollout-2025-10-21T09-14-03-019a0b1c-2d3e-7f40-8a5b-6c7d8e9f0a1b";
    for (key, want) in [(name.to_string(), "passed"), (format!("{name}.jsonl"), "failed")] {
        let v = tmp.path().join("verdicts.csv");
        std::fs::write(&v, format!("task_id,outcome\n{key},{want}\n")).unwrap();
        let (ts, _) = crate::common::ingest_with(coroner::ingest::IngestOptions {
            inputs: vec![dir.clone()],
            verdicts: vec![v],
            ..Default::default()
        });
        assert_eq!(ts.len(), 1);
        assert_eq!(ts[0].outcome.status.as_str(), want, "keyed by {key}");
        assert_ne!(ts[0].task_id, key, "the join is by file name, not by the task id");
    }
}
