//! OpenTelemetry GenAI spans: OTLP JSON, a console-exporter list with pre-1.37 names, JSONL with a broken line, verdict joins.

use coroner::ingest::{FileStatus, IngestOptions, InputErrorKind};
use coroner::model::{Budget, CallRef, Enforcer, OutcomeStatus, Role, TerminationKind, Trajectory};

use crate::common::{ingest, ingest_with, samples, statuses, tempdir};

fn by_session<'a>(ts: &'a [Trajectory], trace: &str) -> &'a Trajectory {
    ts.iter().find(|t| t.session_id.as_deref() == Some(trace)).unwrap_or_else(|| panic!("no trace {trace}"))
}

#[test]
fn otlp_export_one_record_per_trace() {
    let (ts, s) = ingest(&[&samples("otel/agent-runs.otlp.json")]);
    assert!(s.diagnostics.is_empty(), "{:?}", s.diagnostics);
    assert!(matches!(s.files[0].status, FileStatus::Ingested { adapter: "otel-genai", trajectories: 2 }));

    let t = by_session(&ts, "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(t.task_id, "conv_7f3a", "the conversation id when the spans carry one");
    assert_eq!(t.harness, "Triage");
    assert_eq!(t.model.as_deref(), Some("gpt-4.1-mini-2025-04-14"));
    assert!(t.notes.iter().any(|n| n == "provider: openai"), "from gen_ai.provider.name: {:?}", t.notes);
    let roles: Vec<Role> = t.steps.iter().map(|s| s.role).collect();
    use Role::{Assistant as A, System as S, Tool as T, User as U};
    assert_eq!(roles, [S, U, A, T, A, T, T, A]);
    assert_eq!(t.steps[0].text, "You are a support agent for an online shop.");
    let calls: Vec<(&str, &str)> = t.calls().map(|(_, c)| (c.name.as_str(), c.id.as_deref().unwrap())).collect();
    assert_eq!(calls, [("get_order", "call_1"), ("refund_order", "call_2"), ("lookup_policy", "call_3")]);
    assert_eq!(t.steps[2].tool_calls[0].arguments["order_id"], "1234");
    // Results come from the execute_tool spans (the replayed history is not counted twice).
    let ok = &t.steps[3].tool_results[0];
    assert_eq!((ok.call, ok.is_error), (Some(CallRef { step: 2, call: 0 }), false));
    assert_eq!(serde_json::from_str::<serde_json::Value>(&ok.output).unwrap()["days_late"], 5);
    let refund = &t.steps[5].tool_results[0];
    assert!(refund.is_error && refund.unknown_tool.is_none());
    assert_eq!(refund.output, "refund service returned 503 Service Unavailable");
    let unknown = &t.steps[6].tool_results[0];
    assert_eq!(unknown.call, Some(CallRef { step: 4, call: 1 }));
    assert_eq!(unknown.unknown_tool.as_deref(), Some("Tool lookup_policy not found in agent Triage"));
    let declared: Vec<&str> = t.declared_tools.as_ref().unwrap().iter().map(|d| d.name.as_str()).collect();
    assert_eq!(declared, ["get_order", "refund_order"]);
    assert_eq!((t.usage.prompt_tokens, t.usage.completion_tokens, t.usage.api_calls), (Some(1260), Some(104), Some(3)));
    assert_eq!(t.usage.wall_seconds, Some(9.0));
    assert_eq!(t.started_at.as_deref(), Some("2026-03-01T10:00:00Z"));
    assert_eq!(t.steps[2].tokens.as_ref().unwrap().prompt, Some(320));
    // The last reply stopped and no finish tool was declared: that reply is the answer.
    assert_eq!(statuses(t), [("gen_ai.output.messages[0].finish_reason", "stop")]);
    assert_eq!(t.termination.kind, TerminationKind::AgentFinished);
    assert_eq!(t.outcome.status, OutcomeStatus::Unknown);
    // Spans point at the span objects in the file.
    let bytes = std::fs::read(samples("otel/agent-runs.otlp.json")).unwrap();
    let sp = t.steps[5].source_span.unwrap();
    let text = std::str::from_utf8(&bytes[sp.offset as usize..(sp.offset + sp.len) as usize]).unwrap();
    assert!(text.starts_with('{') && text.contains("execute_tool refund_order"));

    // Content capture off, a sub-agent, and the root agent stopped by its turn limit.
    let r = by_session(&ts, "5cf92f3577b34da6a3ce929d0e0e9999");
    assert_eq!(r.task_id, "5cf92f3577b34da6a3ce929d0e0e9999", "the trace id without a conversation id");
    assert_eq!(r.harness, "Researcher");
    assert_eq!(r.calls().map(|(_, c)| c.id.as_deref().unwrap()).collect::<Vec<_>>(), ["toolu_r0", "toolu_r1", "toolu_r2"]);
    assert!(r.calls().all(|(c, _)| r.result_of(c).is_some()));
    let agents: Vec<Option<&str>> = r.steps.iter().map(|s| s.agent.as_deref()).collect();
    assert_eq!(agents[..4], [Some("WebSearcher"); 4]);
    assert_eq!(agents[4..], [None, None]);
    assert!(r.notes.iter().any(|n| n.starts_with("3 tool call(s) rebuilt")));
    assert_eq!(
        (r.termination.kind, r.termination.budget, r.termination.enforced_by),
        (TerminationKind::Budget, Some(Budget::Steps), Some(Enforcer::Harness))
    );
    assert_eq!(r.termination.raw.as_deref(), Some("MaxTurnsExceeded"));
    assert_eq!(r.termination.rule.as_deref(), Some("otel-turn-limit-exception"));
    assert_eq!(r.signals.errors[0].text, "Max turns (3) exceeded", "the agent span's status message");
    assert_eq!(r.usage.prompt_tokens, Some(2700));
}

#[test]
fn console_exporter_list_with_older_attribute_names() {
    let (ts, s) = ingest(&[&samples("otel/console-spans.json")]);
    assert!(s.diagnostics.is_empty(), "{:?}", s.diagnostics);
    assert_eq!(ts.len(), 1);
    let t = &ts[0];
    assert_eq!(t.session_id.as_deref(), Some("0x6e0c63257de34c926f9efcd03927272e"));
    assert_eq!(t.harness, "code-helper", "service.name when no agent span names one");
    assert_eq!(t.model.as_deref(), Some("claude-3-5-sonnet-20241022"));
    assert!(t.notes.iter().any(|n| n == "provider: anthropic"), "from gen_ai.system: {:?}", t.notes);
    // gen_ai.prompt.N / gen_ai.completion.N attributes, then gen_ai.content.* events.
    let roles: Vec<Role> = t.steps.iter().map(|s| s.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant, Role::Tool, Role::Assistant]);
    assert_eq!(t.steps[1].tool_calls[0].name, "read_file");
    assert_eq!(t.steps[1].tool_calls[0].arguments["path"], "main.py");
    assert_eq!(t.steps[2].tool_results[0].call, Some(CallRef { step: 1, call: 0 }));
    assert_eq!(t.steps[2].tool_results[0].output, "import sys\nprint(sys.argv)\n");
    // gen_ai.usage.prompt_tokens / completion_tokens.
    assert_eq!((t.usage.prompt_tokens, t.usage.completion_tokens), (Some(470), Some(1054)));
    // finish reason "length": the output limit cut the last reply.
    assert_eq!((t.termination.budget, t.termination.enforced_by), (Some(Budget::OutputTokens), Some(Enforcer::Provider)));
    assert_eq!(t.termination.raw.as_deref(), Some("length"));
}

#[test]
fn jsonl_keeps_good_lines_and_reports_the_broken_one_at_its_line() {
    let (ts, s) = ingest(&[&samples("otel/spans.jsonl")]);
    assert_eq!(ts.len(), 1);
    assert_eq!(s.quarantined_records, 1);
    let d = &s.diagnostics[0];
    assert_eq!((d.kind, d.line), (InputErrorKind::Truncated, Some(3)));
    assert!(d.to_string().contains("spans.jsonl:3"), "{d}");
    let t = &ts[0];
    assert_eq!(t.harness, "Coder");
    // The execute_tool span was on the broken line; the result still comes from the next
    // turn's input messages (a line holding a whole export request).
    let roles: Vec<Role> = t.steps.iter().map(|s| s.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant, Role::Tool, Role::Assistant]);
    assert_eq!(t.steps[2].tool_results[0].output, "src/a.py:3: # TODO");
    assert_eq!(t.steps[2].tool_results[0].call, Some(CallRef { step: 1, call: 0 }));
    assert_eq!(t.steps[3].text, "One TODO, in src/a.py line 3.");
    assert_eq!(t.steps[1].source_span.unwrap().line, 2);
    assert_eq!(t.steps[3].source_span.unwrap().line, 4);
}

#[test]
fn verdicts_join_by_trace_id_or_conversation_id() {
    let tmp = tempdir();
    let v = tmp.path().join("verdicts.csv");
    std::fs::write(&v, "task_id,outcome\nconv_7f3a,failed\n5cf92f3577b34da6a3ce929d0e0e9999,passed\n").unwrap();
    let (ts, _) =
        ingest_with(IngestOptions { inputs: vec![samples("otel/agent-runs.otlp.json")], verdicts: vec![v], ..IngestOptions::default() });
    assert_eq!(by_session(&ts, "4bf92f3577b34da6a3ce929d0e0e4736").outcome.status, OutcomeStatus::Failed);
    assert_eq!(by_session(&ts, "5cf92f3577b34da6a3ce929d0e0e9999").outcome.status, OutcomeStatus::Passed);
}

#[test]
fn spans_without_genai_are_quarantined() {
    let tmp = tempdir();
    let p = tmp.path().join("http.json");
    std::fs::write(
        &p,
        r#"{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "aa", "spanId": "01", "name": "GET /health", "attributes": [{"key": "http.method", "value": {"stringValue": "GET"}}]}]}]}]}"#,
    )
    .unwrap();
    let (ts, s) = ingest(&[&p]);
    assert!(ts.is_empty());
    assert_eq!(s.quarantined_files(), 1);
    assert_eq!(s.diagnostics[0].kind, InputErrorKind::Schema);
    assert!(s.diagnostics[0].message.contains("GenAI span"));
}
