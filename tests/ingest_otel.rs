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

#[test]
fn genai_repository_names_under_its_schema_url() {
    let (ts, s) = ingest(&[&samples("otel/genai-latest.otlp.json")]);
    assert!(s.diagnostics.is_empty(), "{:?}", s.diagnostics);
    assert!(matches!(s.files[0].status, FileStatus::Ingested { adapter: "otel-genai", trajectories: 1 }));
    let t = &ts[0];
    assert_eq!(t.session_id.as_deref(), Some("6d0f1e2a3b4c5d6e7f8091a2b3c4d5e6"));
    assert_eq!(t.task_id, "conv_trip_42");
    assert_eq!(t.harness, "TripPlanner", "the agent's name, not the workflow's around it");
    assert_eq!(t.model.as_deref(), Some("claude-sonnet-4-5-20250929"));
    assert_eq!(t.provenance.format_version.as_deref(), Some("otel-genai gen-ai/1.42.0"), "the edition from schemaUrl");
    assert!(t.notes.iter().any(|n| n == "provider: anthropic"), "{:?}", t.notes);
    use Role::{Assistant as A, Environment as E, System as S, Tool as T, User as U};
    let roles: Vec<Role> = t.steps.iter().map(|s| s.role).collect();
    assert_eq!(roles, [E, S, U, A, T, T, A, E]);
    // Memory operations are what the agent's memory store did.
    assert!(t.steps[0].text.starts_with("search_memory traveler-prefs query=\"flight preferences\": 2 record(s)\n"), "{}", t.steps[0].text);
    assert!(t.steps[0].text.contains("Prefers morning flights"));
    assert_eq!(t.steps[7].text, "upsert_memory traveler-prefs: 1 record(s)");
    assert!(t.notes.iter().any(|n| n == "1 plan span(s): the agent's planning phase"), "{:?}", t.notes);
    assert!(t.notes.iter().any(|n| n == "memory operations: search_memory x1, upsert_memory x1"), "{:?}", t.notes);
    // The plan span's child chat span is the planning turn.
    assert!(t.steps[3].text.starts_with("Plan: 1. search flights"));
    let calls: Vec<(&str, &str)> = t.calls().map(|(_, c)| (c.name.as_str(), c.id.as_deref().unwrap())).collect();
    assert_eq!(calls, [("search_flights", "toolu_01"), ("get_weather", "toolu_02")]);
    assert!(t.calls().all(|(c, _)| t.result_of(c).is_some()));
    let flights = &t.steps[4].tool_results[0];
    assert_eq!((flights.call, flights.is_error), (Some(CallRef { step: 3, call: 0 }), false));
    assert_eq!(serde_json::from_str::<serde_json::Value>(&flights.output).unwrap()[0]["flight"], "TP1192");
    let weather = &t.steps[5].tool_results[0];
    assert_eq!((weather.call, weather.is_error), (Some(CallRef { step: 3, call: 1 }), true));
    assert_eq!(weather.error_type.as_deref(), Some("TimeoutError"));
    assert_eq!(weather.output, "weather service timed out after 10s");
    let declared: Vec<&str> = t.declared_tools.as_ref().unwrap().iter().map(|d| d.name.as_str()).collect();
    assert_eq!(declared, ["search_flights", "get_weather"]);
    // Token counts stay gen_ai.usage.* on spans (gen_ai.token.* are metric attributes).
    assert_eq!(
        (t.usage.prompt_tokens, t.usage.completion_tokens, t.usage.reasoning_tokens, t.usage.cached_tokens, t.usage.api_calls),
        (Some(1642), Some(228), Some(84), Some(512), Some(2))
    );
    assert_eq!(t.steps[3].tokens.as_ref().unwrap().reasoning, Some(64));
    // The finish reason only in gen_ai.response.finish_reasons (the message's is deprecated).
    assert_eq!(statuses(t), [("gen_ai.response.finish_reasons[0]", "end_turn")]);
    assert_eq!(t.termination.kind, TerminationKind::AgentFinished);
}

/// One conversation as OTLP JSON: an agent, a turn calling a tool, the tool, the final turn.
/// `latest` writes it with the GenAI repository's names and schema URL; otherwise with the names
/// the adapter read before (`gen_ai.system`, `gen_ai.usage.prompt_tokens` / `completion_tokens`,
/// `gen_ai.usage.cache_creation.input_tokens`).
fn conversation(latest: bool) -> String {
    use serde_json::{Value, json};
    let kv = |pairs: Vec<(&str, Value)>| -> Value {
        Value::Array(
            pairs
                .into_iter()
                .map(|(k, v)| {
                    let v = match v {
                        Value::Number(n) => json!({"intValue": n.to_string()}),
                        Value::Array(a) if a.iter().all(Value::is_string) => {
                            json!({"arrayValue": {"values": a.iter().map(|s| json!({"stringValue": s})).collect::<Vec<_>>()}})
                        }
                        Value::String(s) => json!({"stringValue": s}),
                        other => json!({"stringValue": other.to_string()}),
                    };
                    json!({"key": k, "value": v})
                })
                .collect(),
        )
    };
    let provider = if latest { "gen_ai.provider.name" } else { "gen_ai.system" };
    let (input, output) = if latest {
        ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens")
    } else {
        ("gen_ai.usage.prompt_tokens", "gen_ai.usage.completion_tokens")
    };
    let cache_write = if latest { "gen_ai.usage.cache_write.input_tokens" } else { "gen_ai.usage.cache_creation.input_tokens" };
    let user = json!({"role": "user", "parts": [{"type": "text", "content": "How many files in src?"}]});
    let call = json!({"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "ls", "arguments": {"path": "src"}}]});
    let reply = json!({"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "a.rs b.rs"}]});
    let done = json!({"role": "assistant", "parts": [{"type": "text", "content": "Two."}]});
    let span = |id: &str, parent: &str, name: &str, start: u64, end: u64, attrs: Value| {
        json!({"traceId": "7e0c63257de34c926f9efcd039270042", "spanId": id, "parentSpanId": parent, "name": name,
               "startTimeUnixNano": (1_772_359_200_000_000_000u64 + start * 1_000_000).to_string(),
               "endTimeUnixNano": (1_772_359_200_000_000_000u64 + end * 1_000_000).to_string(), "attributes": attrs})
    };
    let chat = |input_messages: Value, output_message: Value, reason: &str, tin: u64, tout: u64| {
        kv(vec![
            ("gen_ai.operation.name", json!("chat")),
            (provider, json!("anthropic")),
            ("gen_ai.request.model", json!("claude-haiku-4-5")),
            ("gen_ai.conversation.id", json!("conv_same")),
            ("gen_ai.input.messages", json!(input_messages.to_string())),
            ("gen_ai.output.messages", json!(json!([output_message]).to_string())),
            ("gen_ai.response.finish_reasons", json!([reason])),
            (input, json!(tin)),
            (output, json!(tout)),
            ("gen_ai.usage.cache_read.input_tokens", json!(40)),
            (cache_write, json!(60)),
        ])
    };
    let spans = json!([
        span(
            "d000000000000001",
            "",
            "invoke_agent Lister",
            0,
            5000,
            kv(vec![
                ("gen_ai.operation.name", json!("invoke_agent")),
                (provider, json!("anthropic")),
                ("gen_ai.agent.name", json!("Lister"))
            ])
        ),
        span(
            "d000000000000002",
            "d000000000000001",
            "chat claude-haiku-4-5",
            100,
            1000,
            chat(json!([user]), call.clone(), "tool_use", 120, 15)
        ),
        span(
            "d000000000000003",
            "d000000000000001",
            "execute_tool ls",
            1100,
            1200,
            kv(vec![
                ("gen_ai.operation.name", json!("execute_tool")),
                ("gen_ai.tool.name", json!("ls")),
                ("gen_ai.tool.call.id", json!("c1")),
                ("gen_ai.tool.call.result", json!("a.rs b.rs"))
            ])
        ),
        span(
            "d000000000000004",
            "d000000000000001",
            "chat claude-haiku-4-5",
            1300,
            4900,
            chat(json!([user, call, reply]), done, "end_turn", 180, 4)
        ),
    ]);
    let mut rs = json!({"resource": {"attributes": kv(vec![("service.name", json!("lister"))])}, "scopeSpans": [{"spans": spans}]});
    if latest {
        rs["schemaUrl"] = json!("https://opentelemetry.io/schemas/gen-ai/1.42.0");
    }
    json!({"resourceSpans": [rs]}).to_string()
}

/// A record as JSON without what tells where it was read from: provenance, byte spans, and the
/// id (a hash of the source path).
fn content(t: &Trajectory) -> serde_json::Value {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                m.remove("source_span");
                m.remove("span");
                m.values_mut().for_each(strip);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut v = serde_json::to_value(t).unwrap();
    let top = v.as_object_mut().unwrap();
    top.remove("provenance");
    top.remove("id");
    strip(&mut v);
    v
}

#[test]
fn old_and_new_names_give_the_same_record() {
    let tmp = tempdir();
    let (old, new) = (tmp.path().join("old.otlp.json"), tmp.path().join("new.otlp.json"));
    std::fs::write(&old, conversation(false)).unwrap();
    std::fs::write(&new, conversation(true)).unwrap();
    let (a, sa) = ingest(&[&old]);
    let (b, sb) = ingest(&[&new]);
    assert!(sa.diagnostics.is_empty() && sb.diagnostics.is_empty(), "{:?} {:?}", sa.diagnostics, sb.diagnostics);
    let (a, b) = (&a[0], &b[0]);
    assert_eq!(a.provenance.format_version.as_deref(), Some("otel-genai"));
    assert_eq!(b.provenance.format_version.as_deref(), Some("otel-genai gen-ai/1.42.0"));
    assert_eq!((b.usage.prompt_tokens, b.usage.completion_tokens, b.usage.cached_tokens), (Some(300), Some(19), Some(80)));
    assert_eq!(b.harness, "Lister");
    assert!(b.notes.iter().any(|n| n == "provider: anthropic"));
    assert_eq!(content(a), content(b));
}

#[test]
fn genai_repository_operations_only_under_its_edition() {
    // Without a schema URL the memory attributes tell the edition; a span named `plan` without
    // `gen_ai.operation.name` is a plan span only then.
    let tmp = tempdir();
    let p = tmp.path().join("inferred.json");
    let chat = r#"{"traceId": "t1", "spanId": "02", "parentSpanId": "01", "name": "chat m", "startTimeUnixNano": "2", "attributes": {"gen_ai.operation.name": "chat", "gen_ai.output.messages": "[{\"role\": \"assistant\", \"parts\": [{\"type\": \"text\", \"content\": \"ok\"}]}]"}}"#;
    let plan = r#"{"traceId": "t1", "spanId": "01", "name": "plan Solver", "startTimeUnixNano": "1", "status": {"code": 2, "message": "planner gave up"}, "attributes": {"error.type": "PlanningError"}}"#;
    let memory = r#"{"traceId": "t1", "spanId": "03", "name": "delete_memory", "startTimeUnixNano": "3", "attributes": {"gen_ai.operation.name": "delete_memory", "gen_ai.memory.store.id": "s1"}}"#;
    std::fs::write(&p, format!("[{chat}, {plan}, {memory}]")).unwrap();
    let (ts, _) = ingest(&[&p]);
    let t = &ts[0];
    assert_eq!(t.provenance.format_version.as_deref(), Some("otel-genai inferred"));
    let texts: Vec<(Role, &str)> = t.steps.iter().map(|s| (s.role, s.text.as_str())).collect();
    assert_eq!(
        texts,
        [
            (Role::Environment, "planning failed: PlanningError: planner gave up"),
            (Role::Assistant, "ok"),
            (Role::Environment, "delete_memory s1")
        ]
    );
    // The same spans under a core schema URL and without the memory span: `plan` is no operation.
    let q = tmp.path().join("core.json");
    let core = |s: &str| {
        s.replacen("{\"traceId\"", "{\"resource\": {\"schema_url\": \"https://opentelemetry.io/schemas/1.37.0\"}, \"traceId\"", 1)
    };
    std::fs::write(&q, format!("[{}, {}]", core(chat), core(plan))).unwrap();
    let (ts, _) = ingest(&[&q]);
    assert_eq!(ts[0].provenance.format_version.as_deref(), Some("otel-genai"));
    assert_eq!(ts[0].steps.iter().map(|s| s.role).collect::<Vec<_>>(), [Role::Assistant]);
}
