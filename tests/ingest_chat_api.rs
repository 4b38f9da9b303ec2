//! OpenAI Chat Completions and Anthropic Messages logs: real VCR cassettes, request/response
//! JSON Lines, batch files, a streamed cassette, and broken logs.

use coroner::ingest::{FileStatus, InputErrorKind};
use coroner::model::{Budget, CallRef, Enforcer, Role, TerminationKind};

use crate::common::{by_task, coroner_in, corpus, ingest, samples, statuses, tempdir};

#[test]
fn real_openai_cassette_builds_one_conversation_from_the_last_request() {
    let Some(dir) = corpus("openai-chat-completions") else { return };
    let (ts, s) = ingest(&[&dir]);
    assert_eq!(s.per_adapter.get("openai-chat"), Some(&1));
    let t = &ts[0];
    assert_eq!(t.task_id, "test_openai_instructions_with_tool_calls_keep_instructions");
    assert_eq!(t.harness, "openai-chat");
    assert_eq!(t.model.as_deref(), Some("gpt-4.1-mini-2025-04-14"));
    use Role::{Assistant as A, System as S, Tool as T, User as U};
    assert_eq!(t.steps.iter().map(|s| s.role).collect::<Vec<_>>(), [S, U, A, T, A], "two requests, history not repeated");
    assert_eq!(t.steps[0].text, "You are a helpful assistant.");
    let declared: Vec<&str> = t.declared_tools.as_ref().unwrap().iter().map(|d| d.name.as_str()).collect();
    assert_eq!(declared, ["get_temperature"]);
    let call = &t.steps[2].tool_calls[0];
    assert_eq!((call.name.as_str(), call.id.as_deref()), ("get_temperature", Some("call_bhZkmIKKItNGJ41whHUHB7p9")));
    assert_eq!(call.arguments["city"], "Tokyo");
    let r = t.result_of(CallRef { step: 2, call: 0 }).unwrap();
    assert_eq!((r.output.as_str(), r.is_error), ("20.0", false));
    assert_eq!(t.steps[4].text, "The temperature in Tokyo is currently 20.0 degrees Celsius.");
    // The last reply's finish reason, as read; a plain stop without a finish call is a stop.
    assert_eq!(statuses(t), [("choices[0].finish_reason", "stop")]);
    assert_eq!(t.termination.kind, TerminationKind::AgentStoppedWithoutFinish);
    // Usage is summed over both responses; each reply step has its own.
    assert_eq!((t.usage.prompt_tokens, t.usage.completion_tokens, t.usage.api_calls), (Some(125), Some(30), Some(2)));
    assert_eq!(t.steps[2].tokens.as_ref().unwrap().prompt, Some(50));
    assert_eq!(t.steps[4].tokens.as_ref().unwrap().prompt, Some(75));
    // Each reply's span is its interaction in the cassette.
    let text = std::fs::read_to_string(dir.join("test_openai_instructions_with_tool_calls_keep_instructions.yaml")).unwrap();
    let second = text.match_indices("- request:").nth(1).unwrap().0;
    assert_eq!(t.steps[2].source_span.unwrap().offset, text.find("- request:").unwrap() as u64);
    assert_eq!(t.steps[4].source_span.unwrap().offset, second as u64);
}

#[test]
fn real_anthropic_cassettes_keep_thinking_and_pair_tool_use() {
    let Some(dir) = corpus("anthropic-messages") else { return };
    let (ts, s) = ingest(&[&dir]);
    assert_eq!(s.per_adapter.get("anthropic-messages"), Some(&2));

    let think = by_task(&ts, "test_anthropic_tool_with_thinking");
    assert_eq!(think.harness, "anthropic-messages");
    assert_eq!(think.model.as_deref(), Some("claude-sonnet-4-20250514"));
    use Role::{Assistant as A, Tool as T, User as U};
    assert_eq!(think.steps.iter().map(|s| s.role).collect::<Vec<_>>(), [U, A, T, A]);
    let r = think.steps[1].reasoning.as_ref().unwrap().text.as_deref().unwrap();
    assert!(r.starts_with("The user is asking about the largest city"));
    let call = &think.steps[1].tool_calls[0];
    assert_eq!((call.name.as_str(), call.id.as_deref()), ("get_user_country", Some("toolu_01YGzqpRE16Vricda3Aqcejo")));
    let res = think.result_of(CallRef { step: 1, call: 0 }).unwrap();
    assert_eq!((res.output.as_str(), res.is_error), ("Mexico", false));
    assert!(think.steps[3].text.contains("**Mexico City**"));
    assert_eq!(statuses(think), [("stop_reason", "end_turn")]);
    assert_eq!(think.termination.kind, TerminationKind::AgentStoppedWithoutFinish);
    assert_eq!((think.usage.prompt_tokens, think.usage.completion_tokens), (Some(398 + 566), Some(155 + 126)));

    let mixed = by_task(&ts, "test_anthropic_mixed_strict_tool_run");
    assert_eq!(mixed.steps[0].role, Role::System);
    assert!(mixed.steps[0].text.starts_with("Always call `country_source` first"));
    let declared: Vec<&str> = mixed.declared_tools.as_ref().unwrap().iter().map(|d| d.name.as_str()).collect();
    assert_eq!(declared, ["country_source", "capital_lookup"]);
    let calls: Vec<(&str, &str)> = mixed.calls().map(|(_, c)| (c.name.as_str(), c.id.as_deref().unwrap())).collect();
    assert_eq!(calls, [("country_source", "toolu_01Ttepb9joVoQFHP568v7UAL"), ("capital_lookup", "toolu_011j5uC2Tg3TZJo3nmLtJ8Mm")]);
    assert_eq!(mixed.calls().nth(1).unwrap().1.arguments["country"], "Japan");
    let outs: Vec<&str> = mixed.calls().map(|(r, _)| mixed.result_of(r).unwrap().output.as_str()).collect();
    assert_eq!(outs, ["Japan", "Tokyo"]);
    assert_eq!(mixed.steps.last().unwrap().text, "Capital: Tokyo");
    assert_eq!(mixed.steps.len(), 7, "three requests repeat the history; it appears once");
    assert_eq!((mixed.usage.prompt_tokens, mixed.usage.completion_tokens, mixed.usage.api_calls), (Some(2076), Some(109), Some(3)));
}

#[test]
fn jsonl_pairs_split_into_conversations_and_name_the_budget() {
    let (ts, _) = ingest(&[&samples("chat-api/openai/agent-log.jsonl")]);
    assert_eq!(ts.len(), 2, "the second first message starts a new conversation");
    let t = by_task(&ts, "agent-log-1");
    assert_eq!(t.steps.len(), 7);
    let names: Vec<&str> = t.calls().map(|(_, c)| c.name.as_str()).collect();
    assert_eq!(names, ["run_tests", "search_docs", "read_file"]);
    // A call to a tool the request did not declare, rejected by the harness.
    let rejected = t.result_of(t.calls().nth(1).unwrap().0).unwrap();
    assert!(rejected.is_error);
    assert!(rejected.unknown_tool.as_deref().unwrap().starts_with("Unknown tool name: 'search_docs'"));
    assert!(t.result_of(t.calls().next().unwrap().0).unwrap().unknown_tool.is_none());
    // finish_reason length: the output budget, with the request's limit.
    assert_eq!((t.termination.budget, t.termination.enforced_by), (Some(Budget::OutputTokens), Some(Enforcer::Provider)));
    assert_eq!((t.termination.limit, t.termination.consumed), (Some(256.0), Some(256.0)));
    assert_eq!((t.usage.completion_tokens, t.usage.reasoning_tokens, t.usage.cached_tokens), (Some(536), Some(416), Some(896)));
    assert_eq!(t.steps[2].reasoning.as_ref().unwrap().tokens, Some(128), "reasoning tokens of that response");
    assert_eq!(t.steps[4].source_span.unwrap().line, 2, "the second reply came from line 2");

    let filtered = by_task(&ts, "agent-log-2");
    assert_eq!(filtered.termination.raw.as_deref(), Some("content_filter"));
    // The provider's filter, not the agent, cut the reply.
    assert_eq!(
        (filtered.termination.kind, filtered.termination.rule.as_deref()),
        (TerminationKind::Infrastructure, Some("reason-content-filter"))
    );
}

#[test]
fn batch_files_give_one_record_per_custom_id() {
    let (ts, _) = ingest(&[&samples("chat-api/openai/batch_output.jsonl"), &samples("chat-api/anthropic/batch_results.jsonl")]);
    assert_eq!(ts.len(), 6);
    let ok = by_task(&ts, "task-17");
    assert_eq!(ok.session_id.as_deref(), Some("task-17"));
    assert!(ok.steps[0].text.starts_with("def is_leap(y):"));
    let limited = by_task(&ts, "task-18");
    assert_eq!((limited.termination.kind, limited.termination.raw.as_deref()), (TerminationKind::Infrastructure, Some("HTTP 429")));
    let refused = by_task(&ts, "task-19");
    assert!(refused.notes.iter().any(|n| n == "the model refused: I can't help with that request."), "{:?}", refused.notes);
    assert_eq!(refused.termination.kind, TerminationKind::AgentStoppedWithoutFinish);
    let claude = by_task(&ts, "task-3");
    assert_eq!(claude.harness, "anthropic-messages");
    assert_eq!(by_task(&ts, "task-4").harness, "anthropic-messages", "a failed item takes the file's provider");
    assert_eq!(by_task(&ts, "task-4").termination.kind, TerminationKind::Infrastructure);
    let expired = by_task(&ts, "task-5");
    assert_eq!((expired.termination.kind, expired.termination.raw.as_deref()), (TerminationKind::Infrastructure, Some("expired")));
}

#[test]
fn anthropic_document_and_streamed_cassette() {
    let (ts, _) =
        ingest(&[&samples("chat-api/anthropic/django__django-11099.json"), &samples("chat-api/anthropic/stream_max_tokens.yaml")]);
    let dj = by_task(&ts, "django__django-11099");
    assert_eq!(
        dj.declared_tools.as_ref().map(|d| d.iter().map(|x| x.name.as_str()).collect::<Vec<_>>()),
        Some(vec!["bash", "str_replace_editor", "web_search"])
    );
    assert_eq!((dj.termination.budget, dj.termination.raw.as_deref()), (Some(Budget::Context), Some("HTTP 400")));
    // The server tool answers inside the assistant message; the editor error is a failed result.
    let (ws, _) = dj.calls().find(|(_, c)| c.name == "web_search").unwrap();
    assert_eq!(dj.result_of(ws).unwrap().call, Some(ws));
    let edit = dj.result_of(dj.calls().find(|(_, c)| c.name == "str_replace_editor").unwrap().0).unwrap();
    assert!(edit.is_error && edit.output.contains("not unique"));
    assert_eq!(dj.usage.api_calls, Some(2), "the failed third call made no completion");

    let streamed = by_task(&ts, "stream_max_tokens");
    assert_eq!(streamed.steps[1].text, "Here is the migration plan:\n1. Add the column as nullable.\n2. Backfill");
    assert_eq!((streamed.termination.budget, streamed.termination.limit), (Some(Budget::OutputTokens), Some(32.0)));
    assert_eq!(streamed.model.as_deref(), Some("claude-haiku-4-5-20251001"));
}

#[test]
fn a_broken_jsonl_line_costs_that_line_only() {
    let text = std::fs::read_to_string(samples("chat-api/openai/agent-log.jsonl")).unwrap();
    let tmp = tempdir();
    let mut lines: Vec<String> = text.lines().map(ToString::to_string).collect();
    lines[1].truncate(300);
    std::fs::write(tmp.path().join("log.jsonl"), lines.join("\n") + "\n").unwrap();
    let (ts, s) = ingest(&[&tmp.path().join("log.jsonl")]);
    assert_eq!(s.quarantined_records, 1);
    assert_eq!((s.diagnostics[0].line, s.diagnostics[0].kind), (Some(2), InputErrorKind::Truncated));
    let t = by_task(&ts, "log-1");
    assert_eq!(t.usage.api_calls, Some(2), "lines 1 and 3 are kept");
    let out = coroner_in(tmp.path(), &["ingest", "log.jsonl", "-o", "out.jsonl"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("log.jsonl:2"));
}

#[test]
fn bad_chat_logs_are_quarantined_with_their_line() {
    let tmp = tempdir();
    let d = tmp.path();
    // YAML that does not parse.
    std::fs::write(d.join("broken.yaml"), "interactions:\n- request:\n    uri: https://api.openai.com/v1/chat/completions\n    body: '{\"messages\": [\n  response: [unclosed\n").unwrap();
    // A pair whose messages are not a list.
    std::fs::write(
        d.join("wrong.json"),
        "{\n  \"request\": {\"model\": \"gpt-4o\", \"messages\": {\"role\": \"user\"}},\n  \"response\": {\"choices\": []}\n}\n",
    )
    .unwrap();
    let (ts, s) = ingest(&[d]);
    assert!(ts.is_empty());
    let yaml = s.diagnostics.iter().find(|x| x.path.ends_with("broken.yaml")).unwrap();
    assert_eq!(yaml.kind, InputErrorKind::Syntax);
    assert!(yaml.line.is_some_and(|l| l >= 4), "{:?}", yaml.line);
    let wrong = s.diagnostics.iter().find(|x| x.path.ends_with("wrong.json")).unwrap();
    assert_eq!((wrong.kind, wrong.line), (InputErrorKind::Schema, Some(1)));
    assert!(wrong.message.contains("`messages` is not a list"));
    assert!(s.files.iter().all(|f| matches!(f.status, FileStatus::Quarantined { .. })));
}

/// A chat log is the last request plus its response: the response's calls are never answered
/// in it, so the missing result is how the record ends, not a log cut short.
#[test]
fn a_chat_log_ending_on_a_call_is_not_a_truncated_log() {
    let tmp = tempdir();
    let log = r#"{"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "fix"}, {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]}, {"role": "tool", "tool_call_id": "c1", "content": "x=1"}]}, "response": {"id": "x", "object": "chat.completion", "model": "gpt-4o", "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": [{"id": "c2", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]}, "finish_reason": "tool_calls"}]}}"#;
    std::fs::write(tmp.path().join("call.json"), log).unwrap();
    let (ts, _) = ingest(&[tmp.path()]);
    assert_eq!(ts.len(), 1);
    let t = &ts[0];
    assert!(t.signals.last_result_unrecorded);
    assert!(t.calls().last().is_some_and(|(r, _)| t.result_of(r).is_none()), "the last call has no result");
    assert_ne!(t.termination.rule.as_deref(), Some(coroner::model::TRUNCATED_LOG));
    assert_ne!(t.termination.kind, coroner::model::TerminationKind::Infrastructure);
}
