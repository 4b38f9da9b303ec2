//! OpenHands agent SDK (V1) event lists (samples written from the SDK's event models) and the
//! evaluation output of OpenHands/benchmarks (samples written from its `EvalOutput`).

use coroner::ingest::{FileStatus, InputErrorKind};
use coroner::model::{CallRef, OutcomeStatus, Role, TerminationKind};

use crate::common::{by_task, coroner, ingest, samples, tempdir};

#[test]
fn sdk_finished_conversation_pairs_calls_and_finishes() {
    let (ts, s) = ingest(&[&samples("openhands-sdk/finished-conversation.json")]);
    assert_eq!(ts.len(), 1);
    assert_eq!(s.per_adapter.get("openhands-sdk"), Some(&1));
    let t = &ts[0];
    assert_eq!(t.harness, "openhands");
    assert_eq!(t.task_id, "finished-conversation");
    let roles: Vec<Role> = t.steps.iter().map(|s| s.role).collect();
    use Role::{Assistant as A, System, Tool as T, User};
    assert_eq!(roles, [System, User, A, T, A, T, A, T, A, T]);
    assert_eq!(t.declared_tools.as_ref().map(Vec::len), Some(3));
    let calls: Vec<(&str, Option<&str>)> = t.calls().map(|(_, c)| (c.name.as_str(), c.id.as_deref())).collect();
    assert_eq!(
        calls,
        [("terminal", Some("call_1")), ("file_editor", Some("call_2")), ("terminal", Some("call_3")), ("finish", Some("call_4"))]
    );
    assert_eq!(t.steps[2].tool_calls[0].arguments["command"], "cat src/range.py");
    let results: Vec<_> = t.steps.iter().flat_map(|s| &s.tool_results).collect();
    assert_eq!(results.len(), 4);
    assert_eq!(results[1].call, Some(CallRef { step: 4, call: 0 }));
    assert!(results.iter().all(|r| !r.is_error && r.call.is_some()));
    assert_eq!(results[2].output, "3 passed in 0.02s");
    assert_eq!(t.termination.kind, TerminationKind::AgentFinished);
    assert_eq!(t.termination.rule.as_deref(), Some("openhands-finish-action"));
    assert_eq!(t.model.as_deref(), Some("litellm_proxy/claude-sonnet-4-5"));
    assert_eq!((t.usage.prompt_tokens, t.usage.completion_tokens, t.usage.cached_tokens), (Some(9120), Some(412), Some(6000)));
    assert_eq!(t.usage.cost_usd, Some(0.0421));
    assert_eq!(t.usage.api_calls, Some(4));
}

#[test]
fn sdk_stuck_conversation_records_errors_and_the_loop_guard() {
    let (ts, s) = ingest(&[&samples("openhands-sdk/stuck-conversation.json")]);
    assert_eq!(s.per_adapter.get("openhands-sdk"), Some(&1));
    let t = &ts[0];
    assert_eq!(t.calls().count(), 3);
    let results: Vec<_> = t.steps.iter().flat_map(|s| &s.tool_results).collect();
    assert_eq!(results.len(), 3);
    assert!(results.iter().all(|r| r.is_error));
    assert_eq!(results[1].call, Some(CallRef { step: 3, call: 0 }));
    assert!(results[1].output.contains("Tool 'browser' not found"));
    assert_eq!(t.termination.rule.as_deref(), Some("openhands-sdk-stuck"));
    assert_eq!(t.termination.raw.as_deref(), Some("stuck"));
    assert_eq!(t.usage.cost_usd, Some(0.0133));
    assert_eq!(t.model, None);
}

#[test]
fn sdk_and_v0_samples_are_told_apart() {
    let (_, s) = ingest(&[&samples("openhands"), &samples("openhands-sdk")]);
    assert_eq!(s.per_adapter.get("openhands-sdk"), Some(&2));
    assert_eq!(s.per_adapter.get("openhands-sdk-conversation"), Some(&1));
    assert_eq!(s.per_adapter.get("openhands-sdk-eval"), Some(&2));
    assert_eq!(s.per_adapter.get("openhands"), Some(&1));
    assert_eq!(s.per_adapter.get("openhands-eval"), Some(&6));
}

#[test]
fn sdk_conversation_directory_reads_base_state_and_event_files() {
    let (ts, s) = ingest(&[&samples("openhands-sdk/errored-conversation")]);
    assert_eq!(ts.len(), 1);
    assert_eq!(s.per_adapter.get("openhands-sdk-conversation"), Some(&1));
    let t = &ts[0];
    assert_eq!(t.task_id, "5e1f0c2a-0000-4000-8000-0000000000e1");
    assert_eq!(t.model.as_deref(), Some("anthropic/claude-sonnet-4-5-20250929"));
    // base_state.json and six event files.
    assert_eq!(t.provenance.files.len(), 7);
    let roles: Vec<Role> = t.steps.iter().map(|s| s.role).collect();
    assert_eq!(roles, [Role::System, Role::User, Role::Assistant, Role::Tool]);
    assert_eq!(t.steps[3].tool_results[0].call, Some(CallRef { step: 2, call: 0 }));
    assert_eq!(t.termination.kind, TerminationKind::Infrastructure);
    assert_eq!(t.termination.source.as_deref(), Some("ConversationErrorEvent"));
    assert!(t.termination.raw.as_deref().unwrap().contains("Overloaded"));
    assert_eq!((t.usage.prompt_tokens, t.usage.completion_tokens, t.usage.cost_usd), (Some(2100), Some(95), Some(0.0087)));
    assert_eq!(t.signals.limits.steps, Some(100.0));
}

/// The two lines of `samples/openhands-sdk/eval-output/`: the finished instance, the errored one.
fn eval_lines() -> (String, String) {
    let read = |f: &str| std::fs::read_to_string(samples(&format!("openhands-sdk/eval-output/{f}"))).unwrap().trim_end().to_string();
    (read("output.jsonl"), read("output_errors.jsonl"))
}

#[test]
fn sdk_eval_output_gives_one_record_per_instance_with_its_events_patch_and_usage() {
    let dir = samples("openhands-sdk/eval-output");
    let (ts, s) = ingest(&[&dir]);
    assert_eq!(ts.len(), 2);
    assert_eq!(s.per_adapter.get("openhands-sdk-eval"), Some(&2));
    assert_eq!(s.quarantined_records, 0);
    assert!(s.files.iter().all(|f| matches!(f.status, FileStatus::Ingested { adapter: "openhands-sdk-eval", trajectories: 1 })));

    let t = by_task(&ts, "django__django-11099");
    assert_eq!(t.harness, "openhands");
    assert_eq!(t.trial, 0, "attempt 1");
    assert_eq!(t.provenance.format_version.as_deref(), Some("openhands-sdk-eval-output"));
    assert_eq!(t.model.as_deref(), Some("litellm_proxy/claude-sonnet-4-5-20250929"));
    let tools: Vec<&str> = t.declared_tools.as_ref().unwrap().iter().map(|d| d.name.as_str()).collect();
    assert_eq!(tools, ["terminal", "file_editor", "task_tracker", "finish", "think"], "named by their dumped title");
    let roles: Vec<Role> = t.steps.iter().map(|s| s.role).collect();
    use Role::{Assistant as A, System, Tool as T, User};
    assert_eq!(roles, [System, User, A, T, A, T, A, T, A, T, A, T]);
    assert!(t.steps[1].text.contains("UsernameValidator accepts a trailing newline"));
    let calls: Vec<&str> = t.calls().map(|(_, c)| c.name.as_str()).collect();
    assert_eq!(calls, ["terminal", "file_editor", "file_editor", "terminal", "finish"]);
    assert_eq!(t.steps[2].tool_calls[0].id.as_deref(), Some("toolu_01Qm1Xc8Vd2Lr7Tn5Hb3Ka9We"));
    assert_eq!(t.steps[4].tool_calls[0].arguments["command"], "str_replace");
    let results: Vec<_> = t.steps.iter().flat_map(|s| &s.tool_results).collect();
    assert_eq!(results.len(), 5);
    assert!(results.iter().all(|r| !r.is_error && r.call.is_some()));
    assert_eq!(results[3].call, Some(CallRef { step: 8, call: 0 }));
    assert_eq!(results[3].output, "False True");
    assert_eq!(t.termination.kind, TerminationKind::AgentFinished);
    assert_eq!(t.termination.rule.as_deref(), Some("openhands-finish-action"));
    let patch = t.submission.as_deref().unwrap();
    assert!(patch.starts_with("diff --git a/django/contrib/auth/validators.py"));
    assert_eq!(patch.matches(r"+    regex = r'\A[\w.@+-]+\Z'").count(), 2);
    assert_eq!((t.usage.prompt_tokens, t.usage.completion_tokens, t.usage.cached_tokens), (Some(53_187), Some(833), Some(41_872)));
    assert_eq!(t.usage.cost_usd, Some(0.067_472));
    assert_eq!(t.usage.api_calls, Some(5));
    assert_eq!(t.signals.limits.steps, Some(100.0));
    assert!(t.notes.iter().any(|n| n.contains("0.06813 USD (test_result.proxy_cost)")));
    assert_eq!(t.outcome.status, OutcomeStatus::Unknown);
    // Spans point at the events inside the line.
    let bytes = std::fs::read(dir.join("output.jsonl")).unwrap();
    let span = t.steps[10].source_span.unwrap();
    let event = std::str::from_utf8(&bytes[span.offset as usize..(span.offset + span.len) as usize]).unwrap();
    assert!(event.starts_with("{\"id\":") && event.ends_with("\"kind\":\"ActionEvent\"}") && event.contains("\"tool_name\":\"finish\""));
    assert_eq!(span.line, 1);

    let e = by_task(&ts, "astropy__astropy-14365");
    assert!(e.steps.is_empty(), "an error row has no history");
    assert_eq!(e.calls().count(), 0);
    assert_eq!(e.model.as_deref(), Some("litellm_proxy/claude-sonnet-4-5-20250929"));
    assert_eq!(e.termination.kind, TerminationKind::Infrastructure);
    assert_eq!(e.termination.source.as_deref(), Some("error"));
    assert_eq!(e.termination.rule.as_deref(), Some("provider-server-error"));
    let raw = e.termination.raw.as_deref().unwrap();
    assert!(raw.starts_with("Instance failed after 3 retries. Last error: Conversation run failed for id="), "{raw}");
    assert_eq!(raw.chars().count(), 200, "the harness cuts the error at 200 characters");
    let bytes = std::fs::read(dir.join("output_errors.jsonl")).unwrap();
    let span = e.signals.errors[0].span.unwrap();
    assert!(bytes[span.offset as usize..].starts_with(b"\"Instance failed after 3 retries."));
    assert!(e.submission.as_deref().unwrap().starts_with("diff --git a/astropy/io/ascii/qdp.py"));
    assert!(e.notes.iter().any(|n| n.contains("git_patch_captured_on_error")));
    assert_eq!((e.usage.prompt_tokens, e.usage.completion_tokens, e.usage.cached_tokens), (Some(34_658), Some(841), Some(21_993)));
    assert_eq!(e.usage.cost_usd, Some(0.066_695));
    assert_eq!(e.usage.api_calls, Some(3));
    assert_eq!(e.outcome.status, OutcomeStatus::Unknown);
}

#[test]
fn sdk_eval_output_keeps_good_lines_around_a_broken_one() {
    let (ok, err) = eval_lines();
    let tmp = tempdir();
    let file = tmp.path().join("output.jsonl");
    std::fs::write(&file, format!("{ok}\n{}\n{err}\n", &ok[..4000])).unwrap();
    let (ts, s) = ingest(&[&file]);
    assert_eq!(ts.iter().map(|t| t.task_id.as_str()).collect::<Vec<_>>(), ["django__django-11099", "astropy__astropy-14365"]);
    assert_eq!(s.quarantined_records, 1);
    assert!(matches!(s.files[0].status, FileStatus::Ingested { adapter: "openhands-sdk-eval", trajectories: 2 }));
    let d = &s.diagnostics[0];
    assert_eq!((d.line, d.kind), (Some(2), InputErrorKind::Truncated));
    assert!(d.message.contains("(instance on line 2)"), "{}", d.message);
    assert!(d.to_string().contains("output.jsonl:2"), "{d}");
}

#[test]
fn sdk_eval_output_is_told_from_v0_past_the_probe_and_without_attempt() {
    let (ok, _) = eval_lines();
    let tmp = tempdir();
    // A first line far longer than detection's 64 KB look.
    let long = ok.replacen("\"instruction\":\"", &format!("\"instruction\":\"{}", "x".repeat(100_000)), 1);
    std::fs::create_dir(tmp.path().join("long")).unwrap();
    std::fs::write(tmp.path().join("long/output.jsonl"), format!("{long}\n{ok}\n")).unwrap();
    // An older EvalOutput (the harness's first `benchmarks/utils/shared.py`): no `attempt`, and
    // V0's metadata fields; only the events' kind says SDK.
    let mut v: serde_json::Value = serde_json::from_str(&ok).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("attempt");
    o.insert(
        "metadata".into(),
        serde_json::json!({"agent_class": "CodeActAgent", "llm_config": {"model": "litellm_proxy/claude-sonnet-4-5-20250929"},
            "agent_config": null, "max_iterations": 100, "eval_output_dir": "eval_outputs", "dataset": "princeton-nlp/SWE-bench_Verified",
            "data_split": "test", "details": {}}),
    );
    let older = serde_json::to_string(&v).unwrap();
    std::fs::create_dir(tmp.path().join("older")).unwrap();
    std::fs::write(tmp.path().join("older/output.jsonl"), format!("{older}\n")).unwrap();
    let (ts, s) = ingest(&[tmp.path()]);
    assert_eq!(s.per_adapter.get("openhands-sdk-eval"), Some(&3), "{:?}", s.per_adapter);
    assert_eq!(s.per_adapter.get("openhands-eval"), None);
    assert!(ts.iter().all(|t| t.steps.len() == 12 && t.model.as_deref() == Some("litellm_proxy/claude-sonnet-4-5-20250929")));
}

#[test]
fn sdk_eval_output_joins_the_swebench_report_by_instance_id() {
    let tmp = tempdir();
    for f in ["output.jsonl", "output_errors.jsonl"] {
        std::fs::copy(samples(&format!("openhands-sdk/eval-output/{f}")), tmp.path().join(f)).unwrap();
    }
    // `swebench-eval` grades output.jsonl, which holds no error row.
    std::fs::write(
        tmp.path().join("output.report.json"),
        r#"{"total_instances": 500, "submitted_instances": 1, "completed_instances": 1, "resolved_instances": 1,
"unresolved_instances": 0, "empty_patch_instances": 0, "error_instances": 0, "completed_ids": ["django__django-11099"],
"incomplete_ids": [], "empty_patch_ids": [], "submitted_ids": ["django__django-11099"],
"resolved_ids": ["django__django-11099"], "unresolved_ids": [], "error_ids": [], "schema_version": 2}"#,
    )
    .unwrap();
    let (ts, _) = ingest(&[tmp.path()]);
    let ok = by_task(&ts, "django__django-11099");
    assert_eq!(ok.outcome.status, OutcomeStatus::Passed);
    assert_eq!(ok.outcome.source.as_ref().unwrap().field, "resolved_ids");
    assert_eq!(by_task(&ts, "astropy__astropy-14365").outcome.status, OutcomeStatus::Unknown);
}

#[test]
fn list_formats_names_the_sdk_eval_output() {
    let out = coroner(&["ingest", "--list-formats"]);
    let table = String::from_utf8_lossy(&out.stdout);
    let row = table.lines().find(|l| l.split_whitespace().next() == Some("openhands-sdk-eval")).unwrap_or_default();
    assert!(row.contains("  benchmarks EvalOutput (SDK events, kind)  "), "{row:?}");
}
