//! Logs of raw chat-API traffic: OpenAI Chat Completions and Anthropic Messages.
//!
//! Harnesses built directly on a provider API leave no transcript of their own, only the
//! requests and responses: a JSON document or JSON Lines of `{"request", "response"}` pairs,
//! OpenAI batch output lines (`{"custom_id", "response": {"status_code", "body"}}`), Anthropic
//! batch results (`{"custom_id", "result": {"type", "message"}}`), or a VCR cassette (YAML
//! `interactions: [{request: {body | parsed_body}, response: {body | parsed_body, status}}]`,
//! streamed bodies included). Every request repeats the whole history, so a conversation is
//! built once from the last request's messages plus its response; earlier responses only add
//! what the history drops (token counts, the reasoning of that turn). Usage is summed over all
//! responses. Consecutive exchanges belong to one conversation while each request extends the
//! previous one (same opening message, at least as many messages); a `metadata.task_id` or
//! `custom_id` keys conversations explicitly. These logs carry no verdict: the task id is the
//! key or the file stem, which a `--verdicts` file joins on.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use serde_json::value::RawValue;

use super::anthropic as chat_anthropic;
use super::openai as chat_openai;
use crate::ingest::adapters::shared::common::{is_finish_tool, num};
use crate::ingest::adapters::shared::lines;
use crate::ingest::diag::{InputError, InputErrorKind};
use crate::ingest::format::{Adapter, Ctx, FileRole, Output, Sniff, Unit, marker, structure};
use crate::ingest::probe::{JsonShape, Probe};
use crate::ingest::source::Source;
use crate::model::{Budget, DeclaredTool, Enforcer, Reasoning, SourceSpan, Step, Termination, TerminationKind, Tokens, Trajectory, Usage};

/// The conversation a request carries, and where each of its messages starts among the steps.
#[derive(Debug, Default)]
pub struct History {
    pub steps: Vec<Step>,
    /// `msg_step[i]`: the step holding message `i` of the request.
    pub msg_step: Vec<usize>,
}

/// What one response says.
#[derive(Debug, Default)]
pub struct Reply {
    pub step: Option<Step>,
    /// `finish_reason` / `stop_reason`.
    pub finish: Option<String>,
    pub tokens: Option<Tokens>,
    pub model: Option<String>,
    pub refusal: Option<String>,
    /// Unix seconds (OpenAI `created`).
    pub created: Option<i64>,
}

/// Whose API the log records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    OpenAi,
    Anthropic,
}

impl Provider {
    /// Harness and adapter name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::OpenAi => "openai-chat",
            Self::Anthropic => "anthropic-messages",
        }
    }

    fn history(self, req: &Value) -> History {
        match self {
            Self::OpenAi => chat_openai::history(req),
            Self::Anthropic => chat_anthropic::history(req),
        }
    }

    fn reply(self, body: &Value) -> Reply {
        match self {
            Self::OpenAi => chat_openai::reply(body),
            Self::Anthropic => chat_anthropic::reply(body),
        }
    }
}

/// Phrases harnesses answer a call to a tool they do not have with (Claude Code's "No such tool
/// available", Codex's "unsupported call", pydantic-ai's "Unknown tool name", ...).
#[must_use]
pub fn is_unknown_tool_message(text: &str) -> bool {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(
            r"(?i)(no such tool available|unknown tool|unsupported (custom tool )?call|is not a valid tool|tool .{1,80} (is not registered|not found|does not exist|is not available)|invalid tool name)",
        )
        .expect("static regex")
    })
    .is_match(text)
}

/// One request with its response, as logged.
#[derive(Debug, Default)]
struct Exchange {
    request: Option<Value>,
    response: Option<Value>,
    status: Option<u64>,
    /// The error a failed call returned (HTTP error body, batch `error`).
    error: Option<String>,
    span: Option<SourceSpan>,
    /// `metadata.task_id` or `custom_id`.
    key: Option<String>,
    uri: Option<String>,
    /// The body could not be read (binary, compressed); said in the notes.
    unreadable: Option<String>,
    /// The provider whose batch format the entry has.
    batch: Option<Provider>,
    /// The request's message count, once its history was dropped.
    messages: Option<usize>,
}

impl Exchange {
    fn req_len(&self) -> usize {
        self.messages.unwrap_or_else(|| self.request.as_ref().and_then(|r| r.get("messages")).and_then(Value::as_array).map_or(0, Vec::len))
    }

    /// Drops the history of a request the next one repeats, keeping its length and opening
    /// message: a long log holds each conversation's history once, not once per call.
    fn forget_history(&mut self) {
        let n = self.req_len();
        if let Some(msgs) = self.request.as_mut().and_then(|r| r.get_mut("messages")).and_then(Value::as_array_mut) {
            msgs.truncate(1);
            self.messages = Some(n);
        }
    }

    fn ok(&self) -> bool {
        self.response.is_some() && self.error.is_none() && self.status.is_none_or(|s| s < 400)
    }

    fn provider(&self) -> Option<Provider> {
        if self.batch.is_some() {
            return self.batch;
        }
        if let Some(r) = &self.response {
            if r.get("choices").is_some() || r.get("object").and_then(Value::as_str).is_some_and(|o| o.starts_with("chat.completion")) {
                return Some(Provider::OpenAi);
            }
            if r.get("stop_reason").is_some() || r.get("type").and_then(Value::as_str) == Some("message") {
                return Some(Provider::Anthropic);
            }
        }
        if let Some(u) = &self.uri {
            if u.contains("anthropic") || u.contains("/v1/messages") {
                return Some(Provider::Anthropic);
            }
            if u.contains("/chat/completions") || u.contains("openai") {
                return Some(Provider::OpenAi);
            }
        }
        let req = self.request.as_ref()?;
        if req.get("system").is_some() || req.get("anthropic_version").is_some() {
            return Some(Provider::Anthropic);
        }
        let msgs = req.get("messages").and_then(Value::as_array)?;
        let anthropic_blocks =
            msgs.iter().filter_map(|m| m.get("content").and_then(Value::as_array)).flatten().any(|b| {
                matches!(b.get("type").and_then(Value::as_str), Some("tool_use" | "tool_result" | "thinking" | "redacted_thinking"))
            });
        Some(if anthropic_blocks { Provider::Anthropic } else { Provider::OpenAi })
    }
}

/// A request or response part of a log entry: its body and status.
fn body_of(part: &Value, ex: &mut Exchange, is_response: bool) {
    let status = num(part.pointer("/status/code")).or_else(|| num(part.get("status_code"))).or_else(|| num(part.get("status")));
    if is_response && let Some(s) = status {
        ex.status = Some(s as u64);
    }
    let body = if let Some(b) = part.get("parsed_body").filter(|b| !b.is_null()) {
        Some(b.clone())
    } else if let Some(b) = part.get("body").filter(|b| !b.is_null()) {
        match b {
            Value::String(s) => decode_body(s, ex),
            Value::Object(o) if o.contains_key("string") => match o.get("string") {
                Some(Value::String(s)) => decode_body(s, ex),
                _ => {
                    ex.unreadable = Some("a body that is not text (compressed or binary)".into());
                    None
                }
            },
            other => Some(other.clone()),
        }
    } else if part.get("messages").is_some() || part.get("choices").is_some() || part.get("content").is_some() {
        Some(part.clone())
    } else {
        None
    };
    if is_response {
        match body {
            Some(b) if b.get("error").is_some_and(|e| !e.is_null()) && b.get("choices").is_none() && b.get("content").is_none() => {
                ex.error = Some(error_message(&b));
            }
            b => ex.response = b,
        }
    } else {
        if let Some(uri) = part.get("uri").or_else(|| part.get("url")).and_then(Value::as_str) {
            ex.uri = Some(uri.to_string());
        }
        ex.request = body;
    }
}

fn error_message(b: &Value) -> String {
    let e = b.get("error").unwrap_or(b);
    match e {
        Value::String(s) => s.clone(),
        other => {
            let msg = other.get("message").and_then(Value::as_str).unwrap_or_default();
            let kind = other.get("type").or_else(|| other.get("code")).and_then(Value::as_str).unwrap_or_default();
            match (kind.is_empty(), msg.is_empty()) {
                (false, false) => format!("{kind}: {msg}"),
                (true, false) => msg.to_string(),
                (false, true) => kind.to_string(),
                (true, true) => other.to_string(),
            }
        }
    }
}

/// A body written as text: JSON, or a server-sent event stream to put back together.
fn decode_body(s: &str, ex: &mut Exchange) -> Option<Value> {
    if let Ok(v) = serde_json::from_str::<Value>(s) {
        return Some(v);
    }
    if let Some(v) = assemble_sse(s) {
        return Some(v);
    }
    if !s.trim().is_empty() {
        ex.unreadable = Some("a body that is neither JSON nor an event stream".into());
    }
    None
}

/// Rebuilds a response from its streamed chunks (OpenAI `chat.completion.chunk` deltas, or
/// Anthropic `message_start` / `content_block_*` / `message_delta` events).
fn assemble_sse(text: &str) -> Option<Value> {
    let events: Vec<Value> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .filter(|d| *d != "[DONE]")
        .filter_map(|d| serde_json::from_str(d).ok())
        .collect();
    if events.is_empty() {
        return None;
    }
    let kind = |e: &Value| e.get("type").and_then(Value::as_str).unwrap_or_default().to_string();
    if events.iter().any(|e| kind(e) == "message_start") {
        let mut msg = Value::Null;
        let mut blocks: BTreeMap<u64, Value> = BTreeMap::new();
        let mut partial: BTreeMap<u64, String> = BTreeMap::new();
        for e in &events {
            let ix = e.get("index").and_then(Value::as_u64).unwrap_or(0);
            match kind(e).as_str() {
                "message_start" => msg = e.get("message").cloned().unwrap_or(Value::Null),
                "content_block_start" => {
                    blocks.insert(ix, e.get("content_block").cloned().unwrap_or(Value::Null));
                }
                "content_block_delta" => {
                    let d = e.get("delta").unwrap_or(&Value::Null);
                    let b = blocks.entry(ix).or_insert_with(|| serde_json::json!({}));
                    for (field, key) in [("text", "text"), ("thinking", "thinking"), ("signature", "signature")] {
                        if let (Some(add), Some(o)) = (d.get(key).and_then(Value::as_str), b.as_object_mut()) {
                            let cur = o.get(field).and_then(Value::as_str).unwrap_or_default().to_string();
                            o.insert(field.into(), Value::String(cur + add));
                        }
                    }
                    if let Some(p) = d.get("partial_json").and_then(Value::as_str) {
                        partial.entry(ix).or_default().push_str(p);
                    }
                }
                "message_delta" => {
                    if let (Some(o), Some(d)) = (msg.as_object_mut(), e.get("delta").and_then(Value::as_object)) {
                        for (k, v) in d {
                            o.insert(k.clone(), v.clone());
                        }
                    }
                    if let (Some(u), Some(o)) = (e.get("usage").and_then(Value::as_object), msg.as_object_mut()) {
                        let usage = o.entry("usage").or_insert_with(|| serde_json::json!({}));
                        if let Some(uo) = usage.as_object_mut() {
                            for (k, v) in u {
                                uo.insert(k.clone(), v.clone());
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        for (ix, json) in partial {
            if let (Some(b), Ok(input)) = (blocks.get_mut(&ix).and_then(Value::as_object_mut), serde_json::from_str::<Value>(&json)) {
                b.insert("input".into(), input);
            }
        }
        if let Some(o) = msg.as_object_mut() {
            o.insert("content".into(), Value::Array(blocks.into_values().collect()));
        }
        return msg.is_object().then_some(msg);
    }
    // OpenAI chunks.
    let (mut content, mut reasoning) = (String::new(), String::new());
    let mut calls: BTreeMap<u64, (String, String, String)> = BTreeMap::new();
    let (mut finish, mut usage, mut model, mut id) = (Value::Null, Value::Null, Value::Null, Value::Null);
    for e in &events {
        if model.is_null() {
            model = e.get("model").cloned().unwrap_or(Value::Null);
            id = e.get("id").cloned().unwrap_or(Value::Null);
        }
        if let Some(u) = e.get("usage").filter(|u| u.is_object()) {
            usage = u.clone();
        }
        let Some(c) = e.pointer("/choices/0") else { continue };
        if let Some(f) = c.get("finish_reason").filter(|f| !f.is_null()) {
            finish = f.clone();
        }
        let d = c.get("delta").unwrap_or(&Value::Null);
        content.push_str(d.get("content").and_then(Value::as_str).unwrap_or_default());
        for k in ["reasoning_content", "reasoning"] {
            reasoning.push_str(d.get(k).and_then(Value::as_str).unwrap_or_default());
        }
        for tc in d.get("tool_calls").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default() {
            let ix = tc.get("index").and_then(Value::as_u64).unwrap_or(0);
            let entry = calls.entry(ix).or_default();
            if let Some(i) = tc.get("id").and_then(Value::as_str) {
                entry.0 = i.to_string();
            }
            entry.1.push_str(tc.pointer("/function/name").and_then(Value::as_str).unwrap_or_default());
            entry.2.push_str(tc.pointer("/function/arguments").and_then(Value::as_str).unwrap_or_default());
        }
    }
    let tool_calls: Vec<Value> = calls
        .into_values()
        .map(|(id, name, args)| serde_json::json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}}))
        .collect();
    let mut message = serde_json::json!({"role": "assistant", "content": content});
    if !reasoning.is_empty() {
        message["reasoning_content"] = Value::String(reasoning);
    }
    if !tool_calls.is_empty() {
        message["tool_calls"] = Value::Array(tool_calls);
    }
    Some(
        serde_json::json!({"id": id, "object": "chat.completion", "model": model, "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage}),
    )
}

/// The key a log entry names its conversation by.
fn key_of(v: &Value) -> Option<String> {
    let s = |p: &str| v.pointer(p).and_then(Value::as_str).filter(|s| !s.is_empty()).map(ToString::to_string);
    s("/metadata/task_id")
        .or_else(|| s("/request/metadata/task_id"))
        .or_else(|| s("/request/body/metadata/task_id"))
        .or_else(|| s("/body/metadata/task_id"))
        .or_else(|| s("/custom_id"))
}

/// One JSON log entry (a pair, a batch output or input line, a batch result) as an exchange.
fn exchange_from(v: &Value) -> Result<Exchange, String> {
    if !v.is_object() {
        return Err("expected a JSON object (a request/response pair)".into());
    }
    let mut ex = Exchange { key: key_of(v), ..Exchange::default() };
    let mut any = false;
    if let Some(r) = v.get("request").filter(|r| !r.is_null()) {
        if !r.is_object() {
            return Err("`request` is not an object".into());
        }
        body_of(r, &mut ex, false);
        any = true;
    }
    if let Some(r) = v.get("response").filter(|r| !r.is_null()) {
        if !r.is_object() {
            return Err("`response` is not an object".into());
        }
        body_of(r, &mut ex, true);
        any = true;
    }
    // Anthropic batch results.
    if let Some(r) = v.get("result").filter(|r| r.is_object()) {
        ex.batch = Some(Provider::Anthropic);
        match r.get("type").and_then(Value::as_str) {
            Some("succeeded") => ex.response = r.get("message").cloned(),
            Some(other) => ex.error = Some(r.get("error").map_or_else(|| other.to_string(), error_message)),
            None => {}
        }
        any = true;
    }
    // Batch input lines: `{custom_id, method, url, body}` (OpenAI) or `{custom_id, params}`.
    if !any && let Some(b) = v.get("body").or_else(|| v.get("params")).filter(|b| b.get("messages").is_some()) {
        ex.request = Some(b.clone());
        ex.uri = v.get("url").and_then(Value::as_str).map(ToString::to_string);
        any = true;
    }
    if let Some(e) = v.get("error").filter(|e| !e.is_null()) {
        ex.error = Some(error_message(&serde_json::json!({"error": e})));
        any = true;
    }
    if !any {
        return Err("no `request`, `response` or batch `result`".into());
    }
    if ex.request.as_ref().is_some_and(|r| r.get("messages").is_some_and(|m| !m.is_array())) {
        return Err("`messages` is not a list".into());
    }
    Ok(ex)
}

/// The top-level list items of a YAML cassette's `interactions`, as byte ranges, for spans.
fn yaml_item_ranges(text: &str) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut in_list = false;
    let mut indent: Option<usize> = None;
    let mut offset = 0usize;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let trimmed = line.trim_start_matches(' ');
        let ind = line.len() - trimmed.len();
        if trimmed.trim().is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if !in_list {
            if trimmed.starts_with("interactions:") {
                in_list = true;
            }
            continue;
        }
        match indent {
            None if trimmed.starts_with("- ") || trimmed.trim_end() == "-" => {
                indent = Some(ind);
                out.push((start, offset));
            }
            Some(i) if ind == i && (trimmed.starts_with("- ") || trimmed.trim_end() == "-") => out.push((start, offset)),
            Some(i) if ind <= i => break,
            _ => {
                if let Some(last) = out.last_mut() {
                    last.1 = offset;
                }
            }
        }
    }
    out
}

#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
fn cassette(src: &Source, doc: &Value, item_spans: &[(usize, usize)]) -> Result<Vec<Exchange>, InputError> {
    let items = doc.get("interactions").and_then(Value::as_array).ok_or_else(|| {
        InputError::new(InputErrorKind::Schema, &src.display, "read the cassette: no `interactions` list")
            .with_help("a VCR cassette holds `interactions: [{request, response}]`")
    })?;
    let mut out = Vec::new();
    for (i, it) in items.iter().enumerate() {
        let mut ex = Exchange { key: key_of(it), ..Exchange::default() };
        if let Some(r) = it.get("request") {
            body_of(r, &mut ex, false);
        }
        if let Some(r) = it.get("response") {
            body_of(r, &mut ex, true);
        }
        ex.span = item_spans.get(i).map(|&(s, e)| src.span(0, s, e - s));
        out.push(ex);
    }
    Ok(out)
}

/// Reads every exchange of a file; bad JSON Lines records go to `diags`.
#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
fn read_exchanges(src: &Source, diags: &mut Vec<InputError>) -> Result<Vec<Exchange>, InputError> {
    let ext = src.path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    if matches!(ext.as_str(), "yaml" | "yml") {
        let text = src.text()?;
        let doc: Value = serde_yaml_ng::from_str(text).map_err(|e| {
            let err = InputError::new(InputErrorKind::Syntax, &src.display, format!("parse the YAML cassette: {e}"))
                .with_help("the file is not valid YAML here");
            match e.location() {
                Some(l) => err.at_offset(&src.bytes, l.index(), "here"),
                None => err,
            }
        })?;
        return cassette(src, &doc, &yaml_item_ranges(text));
    }
    let text = src.text()?;
    let whole = serde_json::from_str::<&RawValue>(text);
    let jsonl = ext == "jsonl" || whole.as_ref().err().is_some_and(|e| e.to_string().starts_with("trailing characters"));
    if !jsonl {
        let raw = whole.map_err(|e| InputError::from_json(&src.display, &src.bytes, "chat log", &e))?;
        let doc: Value = serde_json::from_str(raw.get()).map_err(|e| InputError::from_json(&src.display, &src.bytes, "chat log", &e))?;
        if doc.get("interactions").is_some() {
            return cassette(src, &doc, &[]);
        }
        let items: Vec<&RawValue> = if raw.get().trim_start().starts_with('[') {
            serde_json::from_str(raw.get()).map_err(|e| InputError::from_json(&src.display, &src.bytes, "chat log", &e))?
        } else {
            vec![raw]
        };
        let mut out = Vec::new();
        for item in items {
            let v: Value =
                serde_json::from_str(item.get()).map_err(|e| InputError::from_json(&src.display, &src.bytes, "chat log entry", &e))?;
            let mut ex = exchange_from(&v).map_err(|problem| {
                let at = src.offset_of(item.get()).unwrap_or(0);
                InputError::new(InputErrorKind::Schema, &src.display, format!("read a chat log entry: {problem}"))
                    .with_help("each entry is {\"request\": {...}, \"response\": {...}} or an OpenAI/Anthropic batch line")
                    .at_offset(&src.bytes, at, problem.clone())
            })?;
            ex.span = src.span_of(0, item.get());
            out.push(ex);
        }
        return Ok(out);
    }
    let mut out: Vec<Exchange> = Vec::new();
    for line in lines::split(src, diags) {
        let v: Value = match lines::parse(src, &line, "chat log line") {
            Ok(v) => v,
            Err(e) => {
                diags.push(e);
                continue;
            }
        };
        match exchange_from(&v) {
            Ok(mut ex) => {
                ex.span = Some(line.span(0));
                if let Some(prev) = out.last_mut().filter(|p| p.key == ex.key && continues(p, &ex)) {
                    prev.forget_history();
                }
                out.push(ex);
            }
            Err(problem) => diags.push(lines::schema_error(src, &line, "a chat log line", &problem)),
        }
    }
    Ok(out)
}

/// Messages compared without the prompt-caching markers harnesses move from call to call.
fn same_message(a: &Value, b: &Value) -> bool {
    fn strip(v: &Value) -> Value {
        match v {
            Value::Object(o) => {
                Value::Object(o.iter().filter(|(k, _)| *k != "cache_control").map(|(k, v)| (k.clone(), strip(v))).collect())
            }
            Value::Array(a) => Value::Array(a.iter().map(strip).collect()),
            other => other.clone(),
        }
    }
    a == b || strip(a) == strip(b)
}

/// Whether `next` continues the conversation `prev` belongs to.
fn continues(prev: &Exchange, next: &Exchange) -> bool {
    let (Some(p), Some(n)) = (&prev.request, &next.request) else {
        // Responses without requests (batch output) are each their own conversation.
        return false;
    };
    let pm = p.get("messages").and_then(Value::as_array);
    let nm = n.get("messages").and_then(Value::as_array);
    match (pm, nm) {
        (Some(pm), Some(nm)) => {
            !pm.is_empty()
                && next.req_len() >= prev.req_len()
                && same_message(&pm[0], &nm[0])
                && p.get("system").map(chat_system) == n.get("system").map(chat_system)
        }
        _ => false,
    }
}

fn chat_system(v: &Value) -> String {
    crate::ingest::adapters::shared::common::content_text(v)
}

/// Splits exchanges into conversations: by key when entries carry one, else by continuation.
fn conversations(exchanges: Vec<Exchange>) -> Vec<Vec<Exchange>> {
    let mut out: Vec<Vec<Exchange>> = Vec::new();
    if exchanges.iter().any(|e| e.key.is_some()) {
        let mut by_key: BTreeMap<String, usize> = BTreeMap::new();
        for ex in exchanges {
            let k = ex.key.clone().unwrap_or_default();
            match by_key.get(&k) {
                Some(&i) => out[i].push(ex),
                None => {
                    by_key.insert(k, out.len());
                    out.push(vec![ex]);
                }
            }
        }
        return out;
    }
    for ex in exchanges {
        match out.last_mut() {
            Some(conv) if conv.last().is_some_and(|prev| continues(prev, &ex)) => conv.push(ex),
            _ => out.push(vec![ex]),
        }
    }
    out
}

fn add(total: &mut Option<u64>, n: Option<u64>) {
    if let Some(n) = n {
        *total = Some(total.unwrap_or(0) + n);
    }
}

/// Declared tools of a request (`tools`: OpenAI functions, Anthropic tools and server tools).
#[must_use]
pub fn declared_tools(tools: &Value) -> Option<Vec<DeclaredTool>> {
    let list = tools.as_array()?;
    Some(
        list.iter()
            .filter_map(|t| {
                if let Some(name) = t.as_str() {
                    return Some(DeclaredTool { name: name.to_string(), description: None });
                }
                let f = t.get("function").filter(|f| f.is_object()).unwrap_or(t);
                let name = f.get("name")?.as_str()?.to_string();
                let description = f
                    .get("description")
                    .and_then(Value::as_str)
                    .map(|d| d.lines().next().unwrap_or_default().to_string())
                    .filter(|d| !d.is_empty());
                Some(DeclaredTool { name, description })
            })
            .collect(),
    )
}

/// Tools whose call ends a run by the agent's choice; pydantic-ai returns structured output
/// through a `final_result` tool.
fn finishes(name: &str) -> bool {
    is_finish_tool(name) || name == "final_result" || name.starts_with("final_result_")
}

/// How a conversation ended, from its last exchange.
fn termination(last: &Exchange, reply: Option<&Reply>, provider: Provider) -> Termination {
    let source = match provider {
        Provider::OpenAi => "response choices[0].finish_reason",
        Provider::Anthropic => "response stop_reason",
    };
    if let Some(err) = last.error.as_ref().filter(|_| last.response.is_none() || last.status.is_some_and(|s| s >= 400)) {
        return http_error(last.status, err);
    }
    if last.status.is_some_and(|s| s >= 400) {
        return http_error(last.status, "");
    }
    let Some(reply) = reply else {
        let mut t = Termination::unknown();
        t.detail = Some(
            last.unreadable
                .clone()
                .map_or_else(|| "the log ends with a request that has no response".into(), |u| format!("the last response is {u}")),
        );
        return t;
    };
    let calls: Vec<&str> = reply.step.iter().flat_map(|s| s.tool_calls.iter().map(|c| c.name.as_str())).collect();
    let finish = reply.finish.as_deref().unwrap_or_default();
    let mut t = match finish {
        "length" | "max_tokens" => {
            let mut t = Termination::budget(Budget::OutputTokens, Enforcer::Provider);
            let req = last.request.as_ref();
            t.limit = req.and_then(|r| num(r.get("max_completion_tokens")).or_else(|| num(r.get("max_tokens"))));
            #[expect(clippy::cast_precision_loss, reason = "token counts are far below 2^52")]
            let consumed = reply.tokens.as_ref().and_then(|k| k.completion).map(|c| c as f64);
            t.consumed = consumed;
            t
        }
        "model_context_window_exceeded" => Termination::budget(Budget::Context, Enforcer::Provider),
        "tool_calls" | "function_call" | "tool_use" if calls.iter().any(|c| finishes(c)) => Termination::of(TerminationKind::AgentFinished),
        "tool_calls" | "function_call" | "tool_use" => {
            let mut t = Termination::unknown();
            t.detail = Some("the log ends with a response that asks for tool calls nobody answered".into());
            t
        }
        "stop" | "end_turn" | "stop_sequence" | "refusal" | "content_filter" => {
            let mut t = if calls.iter().any(|c| finishes(c)) {
                Termination::of(TerminationKind::AgentFinished)
            } else {
                Termination::of(TerminationKind::AgentStoppedWithoutFinish)
            };
            if finish == "content_filter" {
                t.detail = Some("the provider's content filter stopped the reply".into());
            }
            t
        }
        _ => Termination::unknown(),
    };
    if let Some(r) = &reply.refusal {
        t.detail = Some(format!("refusal: {}", r.chars().take(300).collect::<String>()));
    }
    if !finish.is_empty() {
        t.raw = Some(finish.to_string());
        t.source = Some(source.to_string());
    }
    t
}

/// A failed API call that ended the log.
fn http_error(status: Option<u64>, message: &str) -> Termination {
    let lower = message.to_ascii_lowercase();
    let mut t = if lower.contains("context length")
        || lower.contains("context window")
        || lower.contains("prompt is too long")
        || lower.contains("maximum context")
        || lower.contains("too many tokens")
    {
        Termination::budget(Budget::Context, Enforcer::Provider)
    } else if status.is_some_and(|s| s == 429 || s == 408 || s >= 500)
        || lower.contains("overloaded")
        || lower.contains("rate limit")
        || lower.contains("rate_limit")
        || lower.contains("insufficient_quota")
        || lower.contains("timeout")
        || matches!(lower.as_str(), "expired" | "canceled" | "cancelled")
    {
        Termination::of(TerminationKind::Infrastructure)
    } else {
        Termination::of(TerminationKind::HarnessError)
    };
    t.raw = Some(status.map_or_else(|| "error".to_string(), |s| format!("HTTP {s}")));
    t.source = Some("response status".into());
    if !message.is_empty() {
        t.detail = Some(message.chars().take(300).collect());
    }
    t
}

/// Builds the record of one conversation.
fn build(conv: &[Exchange], provider: Provider, task_id: String, src: &Source) -> Trajectory {
    let mut t = crate::model::Trajectory::new(task_id, provider.name(), provider.name(), 1, vec![src.provenance("transcript")]);
    t.provenance.format_version = Some(
        match provider {
            Provider::OpenAi => "openai-chat-completions",
            Provider::Anthropic => "anthropic-messages",
        }
        .into(),
    );
    let last_req = conv.iter().rposition(|e| e.request.is_some());
    let mut usage = Usage::default();
    let mut calls = 0u64;
    let mut last_reply: Option<Reply> = None;
    let mut models: BTreeSet<String> = BTreeSet::new();
    let mut created: Vec<i64> = Vec::new();
    if let Some(li) = last_req {
        let req = conv[li].request.as_ref().unwrap_or(&Value::Null);
        let h = provider.history(req);
        t.steps = h.steps;
        // Each message's steps take the span of the exchange that first carried the message.
        for (j, &si) in h.msg_step.iter().enumerate() {
            let first = conv.iter().find(|e| e.req_len() > j).and_then(|e| e.span);
            let end = h.msg_step.get(j + 1).copied().unwrap_or(t.steps.len());
            for step in t.steps.iter_mut().take(end.max(si + 1)).skip(si) {
                if step.source_span.is_none() {
                    step.source_span = first;
                }
            }
        }
        // A system prompt outside `messages` came with the first request.
        let first_span = conv.iter().find(|e| e.request.is_some()).and_then(|e| e.span);
        for s in t.steps.iter_mut().filter(|s| s.source_span.is_none()) {
            s.source_span = first_span;
        }
        t.declared_tools = req.get("tools").and_then(declared_tools);
        t.model = req.get("model").and_then(Value::as_str).map(ToString::to_string);
        let mut mismatched = 0usize;
        for (i, ex) in conv.iter().enumerate() {
            let Some(resp) = ex.response.as_ref().filter(|_| ex.ok()) else { continue };
            let reply = provider.reply(resp);
            calls += 1;
            sum_usage(&mut usage, reply.tokens.as_ref());
            models.extend(reply.model.clone());
            created.extend(reply.created);
            if i == li {
                if let Some(mut step) = reply.step.clone() {
                    step.source_span = ex.span;
                    t.steps.push(step);
                }
                last_reply = Some(reply);
            } else if i < li {
                // The reply to request i is message `req_len(i)` of the last request.
                let at = h.msg_step.get(ex.req_len()).copied();
                match at.and_then(|s| t.steps.get_mut(s)).filter(|s| s.role == crate::model::Role::Assistant) {
                    Some(step) => {
                        enrich(step, &reply);
                        // The turn is evidence from the response that produced it.
                        step.source_span = ex.span.or(step.source_span);
                    }
                    None => mismatched += 1,
                }
            }
        }
        if mismatched > 0 {
            t.notes.push(format!("{mismatched} earlier response(s) are not in the last request's history (retried or rewritten turns); their usage is counted"));
        }
    } else {
        // Responses only (batch output): each reply is the whole conversation.
        for ex in conv {
            let Some(resp) = ex.response.as_ref().filter(|_| ex.ok()) else { continue };
            let reply = provider.reply(resp);
            calls += 1;
            sum_usage(&mut usage, reply.tokens.as_ref());
            models.extend(reply.model.clone());
            created.extend(reply.created);
            if let Some(mut step) = reply.step.clone() {
                step.source_span = ex.span;
                t.steps.push(step);
            }
            last_reply = Some(reply);
        }
        t.notes.push("the log holds responses without their requests: only the replies are steps".into());
    }
    if let Some(m) = models.iter().next_back() {
        t.model = Some(m.clone());
        if models.len() > 1 {
            t.notes.push(format!("responses came from several models: {}", models.iter().cloned().collect::<Vec<_>>().join(", ")));
        }
    }
    usage.api_calls = Some(calls);
    t.usage = usage;
    if let (Some(a), Some(b)) = (created.iter().min(), created.iter().max()) {
        t.started_at = jiff::Timestamp::from_second(*a).ok().map(|x| x.to_string());
        t.ended_at = jiff::Timestamp::from_second(*b).ok().map(|x| x.to_string());
    }
    let last = conv.last().expect("a conversation has an exchange");
    let reply_for_end = if last.ok() { last_reply.as_ref() } else { None };
    t.termination = termination(last, reply_for_end, provider);
    for ex in conv {
        if let Some(u) = &ex.unreadable {
            t.notes.push(format!("an exchange has {u}; it was left out"));
        }
        if let (Some(e), false) = (&ex.error, std::ptr::eq(ex, last)) {
            t.notes.push(format!("a call failed and was retried or abandoned: {}", e.chars().take(200).collect::<String>()));
        }
    }
    if let Some(r) = last_reply.as_ref().and_then(|r| r.refusal.as_ref()) {
        t.notes.push(format!("the model refused: {}", r.chars().take(200).collect::<String>()));
    }
    if t.termination.raw.as_deref() == Some("content_filter") {
        t.notes.push("the provider's content filter stopped the last reply (finish_reason content_filter)".into());
    }
    mark_unknown_tools(&mut t);
    t.notes.push("chat API logs carry no verdict: outcome comes from a verdict file keyed by the task id".into());
    t
}

fn sum_usage(u: &mut Usage, k: Option<&Tokens>) {
    let Some(k) = k else { return };
    add(&mut u.prompt_tokens, k.prompt);
    add(&mut u.completion_tokens, k.completion);
    add(&mut u.reasoning_tokens, k.reasoning);
    add(&mut u.cached_tokens, k.cached);
}

/// Adds to a history step what only its response knew: token counts and reasoning.
fn enrich(step: &mut Step, reply: &Reply) {
    if step.tokens.is_none() {
        step.tokens.clone_from(&reply.tokens);
    }
    let from_reply = reply.step.as_ref().and_then(|s| s.reasoning.clone());
    match (&mut step.reasoning, from_reply) {
        (None, Some(r)) => step.reasoning = Some(r),
        (Some(mine), Some(r)) if mine.tokens.is_none() => mine.tokens = r.tokens,
        _ => {}
    }
    if let (Some(r), Some(n)) = (step.reasoning.as_mut(), reply.tokens.as_ref().and_then(|k| k.reasoning)) {
        r.tokens.get_or_insert(n);
    } else if let Some(n) = reply.tokens.as_ref().and_then(|k| k.reasoning) {
        step.reasoning = Some(Reasoning { text: None, tokens: Some(n) });
    }
}

/// A result that rejects a call to a tool the request did not declare.
fn mark_unknown_tools(t: &mut Trajectory) {
    let declared: Option<BTreeSet<&str>> = t.declared_tools.as_ref().map(|d| d.iter().map(|x| x.name.as_str()).collect());
    let names: BTreeMap<String, String> =
        t.steps.iter().flat_map(|s| s.tool_calls.iter()).filter_map(|c| Some((c.id.clone()?, c.name.clone()))).collect();
    let mut marks = Vec::new();
    for (si, s) in t.steps.iter().enumerate() {
        for (ri, r) in s.tool_results.iter().enumerate() {
            if r.unknown_tool.is_some() || !is_unknown_tool_message(&r.output) {
                continue;
            }
            let name = r.call_id.as_ref().and_then(|id| names.get(id));
            let undeclared = match (&declared, name) {
                (Some(d), Some(n)) => !d.contains(n.as_str()),
                _ => true,
            };
            if undeclared {
                marks.push((si, ri));
            }
        }
    }
    for (si, ri) in marks {
        let r = &mut t.steps[si].tool_results[ri];
        r.unknown_tool = Some(chat_anthropic::first_line(&r.output));
        r.is_error = true;
    }
}

fn stem(path: &std::path::Path) -> String {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    for ext in [".jsonl", ".json", ".yaml", ".yml"] {
        if let Some(s) = name.strip_suffix(ext) {
            return s.to_string();
        }
    }
    name
}

/// Parses a chat log into one record per conversation.
#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
fn parse_log(unit: &Unit, out: &mut Output<'_>) -> Result<(), InputError> {
    let src = Source::read(&unit.primary.path, &unit.primary.display)?;
    let mut diags = Vec::new();
    let exchanges = read_exchanges(&src, &mut diags)?;
    let had_diags = !diags.is_empty();
    out.diagnostics.extend(diags);
    if exchanges.is_empty() {
        return Err(if had_diags {
            lines::nothing_readable(&src, "chat log entry", "each line is one {\"request\", \"response\"} pair or a batch line")
        } else {
            InputError::new(InputErrorKind::Schema, &src.display, "read any request or response from the chat log")
                .with_help("the file holds no exchanges")
        });
    }
    // Entries that say nothing of their provider (a failed batch item) take the file's.
    let file_provider = exchanges.iter().find_map(Exchange::provider);
    let convs = conversations(exchanges);
    let base = stem(&unit.primary.path);
    let n = convs.len();
    for (k, conv) in convs.into_iter().enumerate() {
        let provider = conv.iter().find_map(Exchange::provider).or(file_provider).unwrap_or(Provider::OpenAi);
        let key = conv.iter().find_map(|e| e.key.clone());
        let task = match (&key, n) {
            (Some(key), _) => key.clone(),
            (None, 1) => base.clone(),
            (None, _) => format!("{base}-{}", k + 1),
        };
        let mut t = build(&conv, provider, task, &src);
        t.session_id = key;
        out.emit(t);
    }
    Ok(())
}

/// Which provider the file's prefix names, if any.
fn provider_in_text(p: &Probe) -> Option<Provider> {
    let text = p.text();
    if text.contains("api.anthropic.com") || text.contains("/v1/messages") || text.contains("anthropic-version") {
        return Some(Provider::Anthropic);
    }
    if text.contains("/chat/completions") || text.contains("api.openai.com") || text.contains("chat.completion") {
        return Some(Provider::OpenAi);
    }
    None
}

/// What detection knows about a JSON(L) chat log from its first entry.
fn json_provider(j: &JsonShape) -> Option<Option<Provider>> {
    let pre = if j.top_is_array { "[]." } else { "" };
    let has = |k: &str| j.has(&format!("{pre}{k}"));
    let pair = has("request") || has("response");
    let batch_out = has("custom_id") && (has("response") || has("result"));
    let batch_in = has("custom_id") && (has("body") || has("params"));
    if !(pair || batch_out || batch_in) {
        return None;
    }
    if j.top_is_array && !pair {
        return None;
    }
    let anthropic = has("response.stop_reason")
        || has("request.system")
        || has("request.anthropic_version")
        || has("result")
        || has("params")
        || j.str(&format!("{pre}response.type")) == Some("message");
    let openai = has("response.choices") || has("response.body") || has("response.status_code") || has("body");
    Some(match (anthropic, openai) {
        (true, false) => Some(Provider::Anthropic),
        (false, true) => Some(Provider::OpenAi),
        _ => None,
    })
}

/// Detection shared by both adapters: `Some(provider)` when the prefix names one.
fn sniff_chat(p: &Probe) -> Result<(Option<Provider>, &'static str), String> {
    if matches!(p.ext(), "yaml" | "yml") {
        let text = p.text();
        if !text.lines().any(|l| l.trim_start().starts_with("interactions:")) {
            return Err("YAML without `interactions:` (not a VCR cassette)".into());
        }
        return match provider_in_text(p) {
            Some(pr) => Ok((Some(pr), "VCR cassette of chat API calls")),
            None => Err("a VCR cassette, but not of the OpenAI or Anthropic chat APIs".into()),
        };
    }
    let shape = p.jsonl.as_ref().or(p.json.as_ref()).ok_or("not JSON or a YAML cassette")?;
    if shape.has("interactions") && !shape.top_is_array {
        return provider_in_text(p)
            .map(|pr| (Some(pr), "JSON cassette of chat API calls"))
            .ok_or_else(|| "a cassette of another API".into());
    }
    match json_provider(shape) {
        Some(found) => Ok((found.or_else(|| provider_in_text(p)), "request/response pairs or batch lines")),
        None => Err("no request/response pair or batch line".into()),
    }
}

/// OpenAI Chat Completions logs.
pub struct OpenAiChat;

impl Adapter for OpenAiChat {
    fn name(&self) -> &'static str {
        Provider::OpenAi.name()
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "OpenAI Chat Completions log: request/response pairs (JSON, JSONL), batch output, VCR cassettes"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        match sniff_chat(p)? {
            (Some(Provider::OpenAi), why) => marker(format!("{why} (OpenAI)")),
            // Nothing in the prefix names the provider: parsing decides from the bodies.
            (None, why) => structure(format!("{why} (provider decided from the bodies)")),
            (Some(Provider::Anthropic), _) => Err("an Anthropic Messages log".into()),
        }
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        parse_log(unit, out)
    }
}

/// Anthropic Messages logs.
pub struct AnthropicMessages;

impl Adapter for AnthropicMessages {
    fn name(&self) -> &'static str {
        Provider::Anthropic.name()
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "Anthropic Messages log: request/response pairs (JSON, JSONL), batch results, VCR cassettes"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        match sniff_chat(p)? {
            (Some(Provider::Anthropic), why) => marker(format!("{why} (Anthropic)")),
            _ => Err("no Anthropic Messages marker".into()),
        }
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        parse_log(unit, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_tool_phrases() {
        assert!(is_unknown_tool_message("No such tool available: Foo"));
        assert!(is_unknown_tool_message("Unknown tool name: 'x'. Available tools: 'a'"));
        assert!(is_unknown_tool_message("unsupported call: apply"));
        assert!(!is_unknown_tool_message("File not found"));
    }

    #[test]
    fn streamed_openai_chunks_become_one_message() {
        let sse = "data: {\"id\":\"c\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"He\"}}]}\n\n\
                   data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"t\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\"\"}}]}}]}\n\n\
                   data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"llo\",\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\":1}\"}}]},\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":4}}\n\ndata: [DONE]\n";
        let v = assemble_sse(sse).unwrap();
        let r = chat_openai::reply(&v);
        let s = r.step.unwrap();
        assert_eq!(s.text, "Hello");
        assert_eq!(s.tool_calls[0].arguments["a"], 1);
        assert_eq!(r.finish.as_deref(), Some("tool_calls"));
        assert_eq!(r.tokens.unwrap().completion, Some(4));
    }

    #[test]
    fn streamed_anthropic_events_become_one_message() {
        let sse = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"claude\",\"content\":[],\"usage\":{\"input_tokens\":9,\"output_tokens\":1}}}\n\n\
                   event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n\
                   event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hmm\"}}\n\n\
                   event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"tu\",\"name\":\"f\",\"input\":{}}}\n\n\
                   event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"x\\\": 2}\"}}\n\n\
                   event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"},\"usage\":{\"output_tokens\":7}}\n\n";
        let v = assemble_sse(sse).unwrap();
        let r = chat_anthropic::reply(&v);
        let s = r.step.unwrap();
        assert_eq!(s.reasoning.unwrap().text.as_deref(), Some("hmm"));
        assert_eq!(s.tool_calls[0].arguments["x"], 2);
        assert_eq!(r.finish.as_deref(), Some("max_tokens"));
        assert_eq!(r.tokens.unwrap().completion, Some(7));
    }

    #[test]
    fn cassette_items_have_byte_ranges() {
        let text = "interactions:\n- request:\n    body: a\n  response:\n    body: b\n- request:\n    body: c\nversion: 1\n";
        let r = yaml_item_ranges(text);
        assert_eq!(r.len(), 2);
        assert!(text[r[0].0..r[0].1].starts_with("- request:") && text[r[0].0..r[0].1].ends_with("body: b\n"));
        assert_eq!(&text[r[1].0..r[1].1], "- request:\n    body: c\n");
    }

    #[test]
    fn http_errors_name_who_ended_the_run() {
        assert_eq!(http_error(Some(400), "prompt is too long: 210000 tokens > 200000 maximum").budget, Some(Budget::Context));
        assert_eq!(http_error(Some(529), "overloaded_error: Overloaded").kind, TerminationKind::Infrastructure);
        assert_eq!(http_error(Some(400), "invalid_request_error: bad").kind, TerminationKind::HarnessError);
    }
}
