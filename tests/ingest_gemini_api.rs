//! Gemini API and Vertex AI `generateContent` logs: the hand-written samples in
//! `samples/chat-api/gemini/` (function calling, an SSE stream, Vertex AI with a `MAX_TOKENS`
//! end, a 429, batch prediction lines), and a real public cassette read from a local mirror.
//!
//! Token totals are checked against the samples' own `usageMetadata`, read here with a plain
//! YAML/JSON reader, so the test says what the adapter must agree with, not what it printed.

use std::path::Path;

use coroner::model::{Budget, CallRef, Enforcer, Role, TerminationKind, Trajectory};
use serde_json::Value;

use crate::common::{by_task, ingest, samples, statuses, tempdir};

/// Each interaction's response body as the JSON chunks it holds (one for a plain body, one per
/// SSE `data:` line or array item for a stream).
fn response_chunks(path: &Path) -> Vec<Vec<Value>> {
    let text = std::fs::read_to_string(path).unwrap();
    let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).unwrap();
    let items = doc["interactions"].as_sequence().unwrap();
    items
        .iter()
        .map(|it| {
            let body = it["response"]["body"]["string"].as_str().unwrap();
            match serde_json::from_str::<Value>(body) {
                Ok(Value::Array(a)) => a,
                Ok(v) => vec![v],
                Err(_) => body.lines().filter_map(|l| l.strip_prefix("data: ")).map(|d| serde_json::from_str(d).unwrap()).collect(),
            }
        })
        .collect()
}

/// Prompt, completion (answer + thoughts) and thought tokens summed over the calls that
/// answered: a stream's usage is its last chunk's.
fn usage_in(path: &Path) -> (u64, u64, u64, u64) {
    let n = |u: &Value, k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    let mut sum = (0, 0, 0, 0);
    for chunks in response_chunks(path) {
        let Some(u) = chunks.iter().rev().find_map(|c| c.get("usageMetadata")) else { continue };
        sum.0 += n(u, "promptTokenCount") + n(u, "toolUsePromptTokenCount");
        sum.1 += n(u, "candidatesTokenCount") + n(u, "thoughtsTokenCount");
        sum.2 += n(u, "thoughtsTokenCount");
        sum.3 += n(u, "cachedContentTokenCount");
    }
    sum
}

fn usage_of(t: &Trajectory) -> (u64, u64, u64, u64) {
    let u = &t.usage;
    (u.prompt_tokens.unwrap_or(0), u.completion_tokens.unwrap_or(0), u.reasoning_tokens.unwrap_or(0), u.cached_tokens.unwrap_or(0))
}

fn roles(t: &Trajectory) -> Vec<Role> {
    t.steps.iter().map(|s| s.role).collect()
}

fn declared(t: &Trajectory) -> Vec<&str> {
    t.declared_tools.iter().flatten().map(|d| d.name.as_str()).collect()
}

fn results(t: &Trajectory) -> usize {
    t.steps.iter().map(|s| s.tool_results.len()).sum()
}

use Role::{Assistant as A, System as S, Tool as T, User as U};

#[test]
fn function_calling_cassette_reads_calls_results_thoughts_and_usage() {
    let path = samples("chat-api/gemini/weather_agent.yaml");
    let (ts, s) = ingest(&[&path]);
    assert_eq!(s.per_adapter.get("gemini-generate-content"), Some(&1));
    let t = &ts[0];
    assert_eq!((t.task_id.as_str(), t.harness.as_str()), ("weather_agent", "gemini-generate-content"));
    assert_eq!(t.provenance.format_version.as_deref(), Some("gemini-generate-content"));
    assert_eq!(t.model.as_deref(), Some("gemini-2.5-flash"));
    assert_eq!(roles(t), [S, U, A, T, A, T, A], "three requests repeat the history; it appears once");
    assert!(t.steps[0].text.starts_with("You are a travel assistant."));
    assert_eq!(declared(t), ["get_weather", "get_forecast", "get_air_quality", "google_search"]);
    assert_eq!(t.declared_tools.as_ref().unwrap()[0].description.as_deref(), Some("Current weather for a city."));

    let calls: Vec<(&str, Option<&str>)> = t.calls().map(|(_, c)| (c.name.as_str(), c.id.as_deref())).collect();
    assert_eq!(calls, [("get_weather", None), ("get_forecast", None), ("get_air_quality", None)]);
    assert_eq!(t.steps[2].tool_calls[0].arguments, serde_json::json!({"city": "Paris", "unit": "celsius"}));
    assert_eq!(t.steps[4].tool_calls[0].arguments["days"], 2);
    assert_eq!(results(t), 3);
    // Without ids, each result answers the open call of its name.
    for (r, c) in t.calls() {
        let res = t.result_of(r).unwrap_or_else(|| panic!("{} unanswered", c.name));
        assert_eq!(res.name.as_deref(), Some(c.name.as_str()));
    }
    let weather = t.result_of(CallRef { step: 2, call: 0 }).unwrap();
    assert_eq!((weather.output.as_str(), weather.is_error), ("14 C, light rain", false));
    let forecast = t.result_of(CallRef { step: 4, call: 0 }).unwrap();
    assert_eq!(serde_json::from_str::<Value>(&forecast.output).unwrap()[1]["sky"], "sunny");
    let air = t.result_of(CallRef { step: 4, call: 1 }).unwrap();
    assert!(air.is_error && air.output.contains("unavailable"), "an `error` response is a failed call");

    // The thought summary is the turn's reasoning; its count comes from the response.
    let r = t.steps[2].reasoning.as_ref().unwrap();
    assert!(r.text.as_deref().unwrap().starts_with("The user wants current weather"));
    assert_eq!(r.tokens, Some(61));
    assert!(t.steps[6].text.starts_with("Paris is 14 °C"));

    assert_eq!(usage_of(t), usage_in(&path));
    assert_eq!(t.usage.api_calls, Some(3));
    assert_eq!(t.steps[4].tokens.as_ref().and_then(|k| k.cached), Some(180));
    assert_eq!(statuses(t), [("candidates[0].finishReason", "STOP")]);
    assert_eq!(t.termination.kind, TerminationKind::AgentStoppedWithoutFinish);
    assert_eq!(t.signals.limits.output_tokens, Some(1024.0));
    // Each reply's span is its interaction.
    let text = std::fs::read_to_string(&path).unwrap();
    let starts: Vec<u64> = text.match_indices("- request:").map(|(i, _)| i as u64).collect();
    let reply_spans: Vec<u64> = t.steps.iter().filter(|s| s.role == A).map(|s| s.source_span.unwrap().offset).collect();
    assert_eq!(reply_spans, starts);
}

#[test]
fn streamed_sse_chunks_are_put_back_together() {
    let path = samples("chat-api/gemini/stream_sse.yaml");
    let (ts, _) = ingest(&[&path]);
    let t = &ts[0];
    assert_eq!(t.harness, "gemini-generate-content");
    assert_eq!(t.model.as_deref(), Some("gemini-2.5-pro"));
    assert_eq!(roles(t), [U, A, T, A]);
    let streamed: Vec<String> = response_chunks(&path)[1]
        .iter()
        .filter_map(|c| c.pointer("/candidates/0/content/parts/0/text").and_then(Value::as_str).map(ToString::to_string))
        .collect();
    assert_eq!(streamed.len(), 3, "the answer came in three chunks");
    assert_eq!(t.steps[3].text, streamed.concat());
    let call = &t.steps[1].tool_calls[0];
    assert_eq!((call.name.as_str(), call.arguments["command"].as_str()), ("run_shell_command", Some("ls -1")));
    assert_eq!(t.result_of(CallRef { step: 1, call: 0 }).unwrap().output, "README.md\nsetup.py\ntool.py\n");
    assert_eq!(t.steps[1].reasoning.as_ref().unwrap().text.as_deref(), Some("I should list the files first."));
    assert_eq!(declared(t), ["run_shell_command"]);
    // Usage is cumulative in a stream: the last chunk's, not the sum of the chunks'.
    assert_eq!(usage_of(t), usage_in(&path));
    assert_eq!(t.usage.api_calls, Some(2));
    assert_eq!(statuses(t), [("candidates[0].finishReason", "STOP")]);
    assert_eq!(t.termination.kind, TerminationKind::AgentStoppedWithoutFinish);
}

#[test]
fn vertex_ai_snake_case_with_ids_ends_at_max_tokens() {
    let path = samples("chat-api/gemini/vertex_max_tokens.yaml");
    let (ts, _) = ingest(&[&path]);
    let t = &ts[0];
    assert_eq!(t.model.as_deref(), Some("gemini-2.5-pro"));
    assert_eq!(roles(t), [S, U, A, T, A]);
    assert_eq!(declared(t), ["read_file", "code_execution"]);
    let call = &t.steps[2].tool_calls[0];
    assert_eq!(
        (call.name.as_str(), call.id.as_deref(), call.arguments["path"].as_str()),
        ("read_file", Some("fc-7f3a"), Some("src/app.py"))
    );
    let r = t.result_of(CallRef { step: 2, call: 0 }).unwrap();
    assert_eq!(r.call_id.as_deref(), Some("fc-7f3a"));
    assert!(r.output.starts_with("import os\nos.system("));
    assert_eq!(usage_of(t), usage_in(&path));
    assert_eq!((t.started_at.as_deref(), t.ended_at.as_deref()), (Some("2026-03-04T10:15:02Z"), Some("2026-03-04T10:15:09Z")));
    // MAX_TOKENS is the output budget the request set (`generation_config.max_output_tokens`),
    // spent on thoughts and answer together.
    assert_eq!(statuses(t), [("candidates[0].finishReason", "MAX_TOKENS")]);
    let term = &t.termination;
    assert_eq!((term.kind, term.budget, term.enforced_by), (TerminationKind::Budget, Some(Budget::OutputTokens), Some(Enforcer::Provider)));
    assert_eq!((term.limit, term.consumed), (Some(256.0), Some(256.0)));
    assert_eq!(term.rule.as_deref(), Some("gemini-finish-max-tokens"));
}

#[test]
fn a_rate_limited_call_ends_the_run_as_infrastructure() {
    let path = samples("chat-api/gemini/rate_limited.yaml");
    let (ts, _) = ingest(&[&path]);
    let t = &ts[0];
    assert_eq!(t.model.as_deref(), Some("gemini-2.0-flash"));
    // The first response was a JSON array of chunks (no `alt=sse`); the second call failed,
    // so its request's history is the record and no reply follows it.
    assert_eq!(roles(t), [U, A, T]);
    assert_eq!(t.steps[1].tool_calls[0].arguments["query"], "rotate API key");
    assert_eq!(t.result_of(CallRef { step: 1, call: 0 }).unwrap().output, "Settings > Keys > Rotate. Old keys stay valid for 24 hours.");
    assert_eq!(t.usage.api_calls, Some(1), "the refused call made no completion");
    assert_eq!(usage_of(t), usage_in(&path));
    let e = &t.signals.errors[0];
    assert_eq!(e.field, "response.status");
    assert!(e.text.starts_with("HTTP 429\nRESOURCE_EXHAUSTED: Resource has been exhausted"), "{}", e.text);
    assert_eq!((t.termination.kind, t.termination.rule.as_deref()), (TerminationKind::Infrastructure, Some("provider-rate-limit")));
}

#[test]
fn batch_prediction_lines_are_one_record_each_with_their_filters() {
    let (ts, _) = ingest(&[&samples("chat-api/gemini/batch_predictions.jsonl")]);
    assert_eq!(ts.len(), 3);
    let ok = by_task(&ts, "batch_predictions-1");
    assert_eq!((roles(ok), ok.model.as_deref()), (vec![U, A], Some("gemini-2.0-flash-001")));
    assert_eq!(ok.termination.kind, TerminationKind::AgentStoppedWithoutFinish);

    let unsafe_reply = by_task(&ts, "batch_predictions-2");
    assert_eq!(statuses(unsafe_reply), [("candidates[0].finishReason", "SAFETY")]);
    assert_eq!(
        (unsafe_reply.termination.kind, unsafe_reply.termination.rule.as_deref()),
        (TerminationKind::Infrastructure, Some("gemini-finish-filtered"))
    );
    assert!(unsafe_reply.notes.iter().any(|n| n.contains("HARM_CATEGORY_DANGEROUS_CONTENT (HIGH)")), "{:?}", unsafe_reply.notes);

    let blocked = by_task(&ts, "batch_predictions-3");
    assert_eq!(roles(blocked), [U], "a refused prompt gets no reply");
    assert_eq!(statuses(blocked), [("promptFeedback.blockReason", "BLOCKLIST")]);
    assert_eq!(
        (blocked.termination.kind, blocked.termination.rule.as_deref()),
        (TerminationKind::Infrastructure, Some("gemini-prompt-blocked"))
    );
    assert_eq!(blocked.usage.api_calls, Some(1));
}

#[test]
fn a_malformed_function_call_is_a_format_error_of_that_reply() {
    let tmp = tempdir();
    let line = serde_json::json!({
        "request": {"contents": [{"role": "user", "parts": [{"text": "fix the bug"}]}], "tools": [{"functionDeclarations": [{"name": "edit_file"}]}]},
        "response": {"candidates": [{"finishReason": "MALFORMED_FUNCTION_CALL", "finishMessage": "Malformed function call: edit_file(path='a.py', text=\"x)"}],
                     "usageMetadata": {"promptTokenCount": 30, "totalTokenCount": 30}, "modelVersion": "gemini-2.5-flash"}
    });
    let p = tmp.path().join("malformed.json");
    std::fs::write(&p, line.to_string()).unwrap();
    let (ts, _) = ingest(&[&p]);
    let t = &ts[0];
    assert_eq!(roles(t), [U, A]);
    assert!(t.steps[1].tool_calls.is_empty());
    assert!(t.steps[1].format_error.as_deref().unwrap().starts_with("Malformed function call: edit_file("));
    assert_eq!(statuses(t), [("candidates[0].finishReason", "MALFORMED_FUNCTION_CALL")]);
    assert_eq!((t.termination.kind, t.termination.rule.as_deref()), (TerminationKind::Unknown, Some("gemini-finish-bad-call")));
}

/// A log of the SDK's own calls (`generate_content(model=, contents=, config=)`): the settings
/// sit under `config`, and `contents` may be a bare string.
#[test]
fn sdk_level_pairs_read_their_config() {
    let tmp = tempdir();
    let line = serde_json::json!({
        "request": {"model": "gemini-2.5-flash", "contents": "Name a prime above 100.",
                    "config": {"system_instruction": "Answer with a number.", "max_output_tokens": 8,
                               "tools": [{"function_declarations": [{"name": "is_prime"}]}]}},
        "response": {"candidates": [{"content": {"role": "model", "parts": [{"text": "101"}]}, "finishReason": "MAX_TOKENS"}],
                     "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 8}}
    });
    let p = tmp.path().join("sdk.jsonl");
    std::fs::write(&p, format!("{line}\n")).unwrap();
    let (ts, _) = ingest(&[&p]);
    let t = &ts[0];
    assert_eq!(t.model.as_deref(), Some("gemini-2.5-flash"), "the request names it; the response does not");
    assert_eq!(roles(t), [S, U, A]);
    assert_eq!((t.steps[0].text.as_str(), t.steps[1].text.as_str()), ("Answer with a number.", "Name a prime above 100."));
    assert_eq!(declared(t), ["is_prime"]);
    assert_eq!((t.termination.budget, t.termination.limit, t.termination.consumed), (Some(Budget::OutputTokens), Some(8.0), Some(8.0)));
}

#[test]
fn bad_gemini_logs_are_quarantined_with_their_line() {
    let tmp = tempdir();
    let d = tmp.path();
    std::fs::write(d.join("not_a_list.jsonl"), "{\"request\": {\"contents\": 42}, \"response\": {\"candidates\": []}}\n").unwrap();
    std::fs::write(
        d.join("torn.yaml"),
        "interactions:\n- request:\n    uri: https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:generateContent\n    body: '{\"contents\": [\n  response: [unclosed\n",
    )
    .unwrap();
    let (ts, s) = ingest(&[d]);
    assert!(ts.is_empty());
    let list = s.diagnostics.iter().find(|x| x.path.ends_with("not_a_list.jsonl")).unwrap();
    assert_eq!(list.line, Some(1));
    assert!(list.message.contains("`contents` is not a list of turns"), "{}", list.message);
    let torn = s.diagnostics.iter().find(|x| x.path.ends_with("torn.yaml")).unwrap();
    assert!(torn.line.is_some_and(|l| l >= 4), "{:?}", torn.line);
}

/// A real cassette: dd-trace-py's google-genai test of code execution, recorded through aiohttp
/// (header names are tagged `multidict.istr` keys). Read from the local mirror that `fetch`
/// makes, when `CORONER_MIRROR` points at it.
const REAL_REPO: &str = "DataDog+dd-trace-py";
const REAL_COMMIT: &str = "3bb9ecda22830e3303b18b0ffa5abe7586aef6a7";
const REAL_PATH: &str = "tests/cassettes/genai/genai_v1beta_models_gemini-2.5-flash_generateContent_post_459b74a0.yaml";

fn mirrored(repo: &str, commit: &str, path: &str) -> Option<Vec<u8>> {
    let Some(root) = std::env::var_os("CORONER_MIRROR") else {
        eprintln!("SKIPPED: CORONER_MIRROR is not set (the test on {repo}:{path} needs the mirror)");
        return None;
    };
    let dir = Path::new(&root).join(repo).join("repo");
    let out = std::process::Command::new("git").arg("-C").arg(&dir).arg("show").arg(format!("{commit}:{path}")).output().ok();
    match out.filter(|o| o.status.success()) {
        Some(o) => Some(o.stdout),
        None => {
            eprintln!("SKIPPED: {commit}:{path} is not in {}", dir.display());
            None
        }
    }
}

#[test]
fn real_dd_trace_py_code_execution_cassette() {
    let Some(bytes) = mirrored(REAL_REPO, REAL_COMMIT, REAL_PATH) else { return };
    let tmp = tempdir();
    let p = tmp.path().join(REAL_PATH.rsplit('/').next().unwrap());
    std::fs::write(&p, bytes).unwrap();
    let (ts, s) = ingest(&[&p]);
    assert_eq!(s.per_adapter.get("gemini-generate-content"), Some(&1), "{:?}", s.diagnostics);
    let t = &ts[0];
    assert_eq!(t.model.as_deref(), Some("gemini-2.5-flash"));
    assert_eq!(roles(t), [U, A]);
    assert!(t.steps[0].text.starts_with("What is the sum of the first 50 prime numbers?"));
    assert_eq!(declared(t), ["code_execution"]);
    // The model ran one program and read its output, inside the one reply.
    let calls: Vec<&str> = t.calls().map(|(_, c)| c.name.as_str()).collect();
    assert_eq!(calls, ["code_execution"]);
    let call = &t.steps[1].tool_calls[0];
    assert_eq!(call.arguments["language"], "PYTHON");
    assert!(call.arguments["code"].as_str().unwrap().contains("def is_prime(n):"));
    let r = t.result_of(CallRef { step: 1, call: 0 }).unwrap();
    assert!(!r.is_error && r.output.contains("The sum of the first 50 prime numbers is: 5117"));
    assert!(t.steps[1].text.ends_with("223, 227, 229."));
    // promptTokenCount 32 + toolUsePromptTokenCount 619; candidates 575 + thoughts 199.
    assert_eq!(usage_of(t), (651, 774, 199, 0));
    assert_eq!(statuses(t), [("candidates[0].finishReason", "STOP")]);
}

/// OpenAI and Anthropic logs are not taken for Gemini's, nor Gemini's for theirs.
#[test]
fn providers_stay_apart() {
    let (ts, s) = ingest(&[&samples("chat-api/openai"), &samples("chat-api/anthropic"), &samples("chat-api/gemini")]);
    assert_eq!(s.per_adapter.get("gemini-generate-content"), Some(&7));
    assert!(s.per_adapter.get("openai-chat").is_some_and(|n| *n > 0));
    assert!(s.per_adapter.get("anthropic-messages").is_some_and(|n| *n > 0));
    // Each provider's files go to its own reader, whatever the others hold.
    for t in &ts {
        let file = &t.provenance.files[0].path;
        let want = ["openai", "anthropic", "gemini"]
            .iter()
            .find(|p| file.contains(&format!("chat-api/{p}/")))
            .map(|p| match *p {
                "openai" => "openai-chat",
                "anthropic" => "anthropic-messages",
                _ => "gemini-generate-content",
            })
            .unwrap_or_else(|| panic!("a record from {file}"));
        assert_eq!(t.provenance.adapter, want, "{file}");
    }
}

/// dd-trace-py's streamed cassette (`streamGenerateContent?alt=sse`, five chunks): the text is
/// the chunks' text joined, and usage is the last chunk's (its prompt count, 14, differs from
/// the 15 the earlier chunks said).
#[test]
fn real_dd_trace_py_sse_stream_cassette() {
    let path = "tests/contrib/google_genai/cassettes/v1/generate_content_stream.yaml";
    let Some(bytes) = mirrored(REAL_REPO, "ec49525269a71d72c5fa22353b5c6838735756ce", path) else { return };
    let tmp = tempdir();
    let p = tmp.path().join("generate_content_stream.yaml");
    std::fs::write(&p, bytes).unwrap();
    let (ts, _) = ingest(&[&p]);
    let t = &ts[0];
    assert_eq!((t.harness.as_str(), t.model.as_deref()), ("gemini-generate-content", Some("gemini-2.0-flash-001")));
    assert_eq!(roles(t), [U, A]);
    assert_eq!(t.steps[0].text, "Why is the sky blue? Explain in 2-3 sentences.");
    let chunks = &response_chunks(&p)[0];
    assert_eq!(chunks.len(), 5);
    let joined: String = chunks.iter().filter_map(|c| c.pointer("/candidates/0/content/parts/0/text").and_then(Value::as_str)).collect();
    assert_eq!(t.steps[1].text, joined);
    assert!(t.steps[1].text.starts_with("The sky appears blue due to a phenomenon called Rayleigh scattering."));
    assert_eq!(usage_of(t), (14, 51, 0, 0));
    assert_eq!(statuses(t), [("candidates[0].finishReason", "STOP")]);
    assert_eq!(t.termination.kind, TerminationKind::AgentStoppedWithoutFinish);
}

/// Gemini API batch output: `{"key", "response"}` or `{"key", "error"}` per line, one record
/// per key; a failed line is what its error says.
#[test]
fn gemini_batch_output_is_keyed_by_its_key() {
    let tmp = tempdir();
    let ok = serde_json::json!({"key": "req-1", "response": {"candidates": [{"content": {"role": "model", "parts": [{"text": "Hi"}]}, "finishReason": "STOP"}], "modelVersion": "gemini-2.5-flash"}});
    let bad = serde_json::json!({"key": "req-2", "error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}});
    let p = tmp.path().join("batch_out.jsonl");
    std::fs::write(&p, format!("{ok}\n{bad}\n")).unwrap();
    let (ts, _) = ingest(&[&p]);
    assert_eq!(ts.len(), 2);
    let first = by_task(&ts, "req-1");
    assert_eq!((roles(first), first.session_id.as_deref()), (vec![A], Some("req-1")));
    let failed = by_task(&ts, "req-2");
    assert_eq!(failed.signals.errors[0].text, "UNAVAILABLE: The model is overloaded.");
    assert_eq!(failed.termination.kind, TerminationKind::Infrastructure);
}
