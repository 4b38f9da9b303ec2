//! Gemini CLI: the chat sessions it records (`~/.gemini/tmp/<project>/chats/session-*.json`,
//! and the `.jsonl` form newer versions append to) and the output of headless runs
//! (`gemini -p ... --output-format json` or `stream-json`, or plain text).
//!
//! A session (`ConversationRecord` in `packages/core/src/services/chatRecordingTypes.ts`) is
//! `{sessionId, projectHash, startTime, lastUpdated, messages}`; each message has `type`
//! `user`/`gemini`/`info`/`error`/`warning`, `content` (a string or Gemini `Part`s), and gemini
//! messages carry `toolCalls` (each with its own `result` — `functionResponse` parts — and
//! `status` success/error/cancelled), `thoughts` and `tokens`. The JSONL form writes a metadata
//! line, then one line per message (a later line with the same `id` replaces the earlier one),
//! `{"$rewindTo": id}` (drops that message and everything after it) and `{"$set": {...}}`
//! (metadata, or a checkpoint of all `messages`). The scheduler rejects a call to a name it
//! does not know with `Tool "X" not found in registry.` (1.x) or `Tool "X" not found.`.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::ingest::adapters::shared::common::{tool_call, uint};
use crate::ingest::adapters::shared::lines;
use crate::ingest::diag::InputError;
use crate::ingest::format::{Adapter, Ctx, FileRole, Output, Sniff, Unit, marker};
use crate::ingest::probe::{Probe, Scalar};
use crate::ingest::source::Source;
use crate::model::{
    Budget, CallRef, Enforcer, Reasoning, Role, SourceSpan, Step, Termination, TerminationKind, Tokens, ToolResult, Trajectory,
};

const SESSION: &str = "gemini-cli";
const HEADLESS: &str = "gemini-cli-headless";
const HARNESS: &str = "gemini-cli";

/// A session message as recorded.
#[derive(Deserialize)]
struct RawMessage {
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    content: Value,
    #[serde(default, rename = "toolCalls")]
    tool_calls: Option<Vec<RawToolCall>>,
    #[serde(default)]
    thoughts: Option<Vec<RawThought>>,
    #[serde(default)]
    tokens: Option<RawTokens>,
    #[serde(default)]
    model: Option<String>,
}

#[derive(Deserialize)]
struct RawToolCall {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: String,
    #[serde(default)]
    args: Value,
    #[serde(default)]
    result: Value,
    #[serde(default)]
    status: Option<String>,
    #[serde(default, rename = "resultDisplay")]
    result_display: Value,
}

#[derive(Deserialize)]
struct RawThought {
    #[serde(default)]
    subject: String,
    #[serde(default)]
    description: String,
}

#[derive(Deserialize)]
struct RawTokens {
    #[serde(default)]
    input: Option<u64>,
    #[serde(default)]
    output: Option<u64>,
    #[serde(default)]
    cached: Option<u64>,
    #[serde(default)]
    thoughts: Option<u64>,
}

/// The session's own fields; `messages` is read separately so spans stay borrowed.
#[derive(Deserialize, Default)]
struct RawMeta {
    #[serde(default, rename = "sessionId")]
    session_id: Option<String>,
    #[serde(default, rename = "startTime")]
    start_time: Option<String>,
    #[serde(default, rename = "lastUpdated")]
    last_updated: Option<String>,
    #[serde(default)]
    summary: Option<String>,
    #[serde(default)]
    kind: Option<String>,
}

#[derive(Deserialize)]
struct RawSession<'a> {
    #[serde(flatten)]
    meta: RawMeta,
    #[serde(borrow, default)]
    messages: Vec<&'a RawValue>,
}

/// Text of a `PartListUnion`: a string, one part, or a list of them. Function calls and
/// responses inside content are named, not expanded (they are read from `toolCalls`).
fn parts_text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().map(parts_text).filter(|s| !s.is_empty()).collect::<Vec<_>>().join("\n"),
        Value::Object(o) => {
            if let Some(t) = o.get("text").and_then(Value::as_str) {
                t.to_string()
            } else if let Some(r) = o.get("functionResponse") {
                response_text(r.get("response").unwrap_or(&Value::Null))
            } else {
                o.keys().next().map(|k| format!("[{k}]")).unwrap_or_default()
            }
        }
        other => other.to_string(),
    }
}

/// `functionResponse.response` is `{output}` or `{error}` (or any object the tool returned).
fn response_text(r: &Value) -> String {
    if let Some(s) = r.get("output").and_then(Value::as_str) {
        return s.to_string();
    }
    if let Some(s) = r.get("error").and_then(Value::as_str) {
        return s.to_string();
    }
    match r {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The name in the scheduler's unknown-tool rejection, with the sentence.
fn unknown_tool(text: &str) -> Option<(String, String)> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| regex::Regex::new(r#"Tool "([^"]*)" not found(?: in registry)?\."#).expect("static regex"));
    let c = re.captures(text)?;
    Some((c.get(1)?.as_str().to_string(), c.get(0)?.as_str().to_string()))
}

/// `run_shell_command` reports `Exit Code: N` inside its output (the call itself succeeds).
fn shell_exit_code(output: &str) -> Option<i64> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| regex::Regex::new(r"(?m)^Exit Code: (-?\d+)\s*$").expect("static regex"));
    re.captures(output)?.get(1)?.as_str().parse().ok()
}

fn to_u32(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

/// Builds steps from session messages (in their final order) and finishes the record.
fn build(t: &mut Trajectory, msgs: &[(RawMessage, Option<SourceSpan>)]) {
    let mut tokens_seen = false;
    for (m, span) in msgs {
        let text = parts_text(&m.content);
        match m.kind.as_str() {
            "gemini" => {
                let mut s = Step::new(Role::Assistant, text);
                s.timestamp = m.timestamp.clone();
                s.source_span = *span;
                let thoughts: Vec<String> = m
                    .thoughts
                    .iter()
                    .flatten()
                    .map(|th| if th.subject.is_empty() { th.description.clone() } else { format!("{}: {}", th.subject, th.description) })
                    .collect();
                if let Some(tok) = &m.tokens {
                    tokens_seen = true;
                    s.tokens = Some(Tokens { prompt: tok.input, completion: tok.output, reasoning: tok.thoughts, cached: tok.cached });
                }
                let reasoning_tokens = m.tokens.as_ref().and_then(|k| k.thoughts).filter(|n| *n > 0);
                if !thoughts.is_empty() || reasoning_tokens.is_some() {
                    s.reasoning = Some(Reasoning { text: (!thoughts.is_empty()).then(|| thoughts.join("\n")), tokens: reasoning_tokens });
                }
                if t.model.is_none() {
                    t.model.clone_from(&m.model);
                }
                let calls = m.tool_calls.as_deref().unwrap_or_default();
                for c in calls {
                    s.tool_calls.push(tool_call(c.id.clone(), &c.name, &c.args));
                }
                let at = to_u32(t.steps.len());
                t.steps.push(s);
                if calls.is_empty() {
                    continue;
                }
                let mut results = Step::new(Role::Tool, String::new());
                results.source_span = *span;
                for (k, c) in calls.iter().enumerate() {
                    let response = match &c.result {
                        Value::Null => None,
                        other => Some(other),
                    };
                    let mut output = response.map(parts_text).unwrap_or_default();
                    if output.is_empty() {
                        output = parts_text(&c.result_display);
                    }
                    let has_error = response.is_some_and(|r| {
                        let items: Vec<&Value> = r.as_array().map_or_else(|| vec![r], |a| a.iter().collect());
                        items.iter().any(|p| p.pointer("/functionResponse/response/error").is_some())
                    });
                    let status = c.status.as_deref().unwrap_or("");
                    if response.is_none() && status.is_empty() {
                        // Still running when the session was written: no result to record.
                        continue;
                    }
                    let mut r = ToolResult::new(output);
                    r.call_id.clone_from(&c.id);
                    r.name = Some(c.name.clone());
                    r.call = Some(CallRef { step: at, call: to_u32(k) });
                    r.is_error = has_error || matches!(status, "error" | "cancelled");
                    r.exit_code = shell_exit_code(&r.output);
                    if let Some((name, sentence)) = unknown_tool(&r.output).filter(|(n, _)| *n == c.name) {
                        r.unknown_tool = Some(sentence);
                        r.name = Some(name);
                    }
                    results.tool_results.push(r);
                }
                if !results.tool_results.is_empty() {
                    t.steps.push(results);
                }
            }
            "user" => {
                let mut s = Step::new(Role::User, text);
                s.timestamp = m.timestamp.clone();
                s.source_span = *span;
                t.steps.push(s);
            }
            other => {
                // info / error / warning: the CLI talking, not the model.
                let shown = if other.is_empty() { text } else { format!("[{other}] {text}") };
                let mut s = Step::new(Role::Environment, shown);
                s.timestamp = m.timestamp.clone();
                s.source_span = *span;
                t.steps.push(s);
            }
        }
    }
    if tokens_seen {
        let sum = |f: fn(&Tokens) -> Option<u64>| t.steps.iter().filter_map(|s| s.tokens.as_ref()).filter_map(f).sum::<u64>();
        t.usage.prompt_tokens = Some(sum(|k| k.prompt));
        t.usage.completion_tokens = Some(sum(|k| k.completion));
        t.usage.reasoning_tokens = Some(sum(|k| k.reasoning));
        t.usage.cached_tokens = Some(sum(|k| k.cached));
    }
    t.usage.api_calls = Some(t.steps.iter().filter(|s| s.role == Role::Assistant).count() as u64).filter(|n| *n > 0);
    t.termination = session_termination(msgs);
}

fn is_api_error(text: &str) -> bool {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(r"(?i)(api error|quota|rate ?limit|resource_exhausted|\b429\b|\b50[0-4]\b|unavailable|overloaded|deadline exceeded|fetch failed|network|ECONN)")
            .expect("static regex")
    })
    .is_match(text)
}

/// An interactive session has no finish protocol: a reply without tool calls ends the turn.
fn session_termination(msgs: &[(RawMessage, Option<SourceSpan>)]) -> Termination {
    let Some((last, _)) = msgs.iter().rev().find(|(m, _)| !matches!(m.kind.as_str(), "info" | "warning")) else {
        return Termination::unknown();
    };
    let text = parts_text(&last.content);
    let source = "messages[-1]";
    match last.kind.as_str() {
        "gemini" if last.tool_calls.as_ref().is_none_or(Vec::is_empty) => {
            Termination::of(TerminationKind::AgentStoppedWithoutFinish).with_raw("gemini reply without tool calls", source)
        }
        "gemini" => {
            let cancelled = last.tool_calls.iter().flatten().any(|c| c.status.as_deref() == Some("cancelled"));
            Termination {
                detail: Some(if cancelled {
                    "the session ends with a tool call the user cancelled".into()
                } else {
                    "the session ends after tool calls, before the model's next reply".into()
                }),
                ..Termination::unknown()
            }
        }
        "error" => {
            let kind = if is_api_error(&text) { TerminationKind::Infrastructure } else { TerminationKind::HarnessError };
            Termination {
                detail: Some(text.lines().next().unwrap_or("").chars().take(300).collect()),
                ..Termination::of(kind).with_raw("error", source)
            }
        }
        _ => Termination { detail: Some("the session ends with a user message the model did not answer".into()), ..Termination::unknown() },
    }
}

fn file_stem(p: &Path) -> String {
    let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    name.split('.').next().unwrap_or(&name).to_string()
}

fn session_record(src: &Source, meta: &RawMeta, adapter: &str, format: &str) -> Trajectory {
    let task = meta.session_id.clone().unwrap_or_else(|| file_stem(&src.path));
    let mut t = crate::model::Trajectory::new(task, HARNESS, adapter, 1, vec![src.provenance("transcript")]);
    t.session_id.clone_from(&meta.session_id);
    t.provenance.format_version = Some(format.into());
    t.started_at.clone_from(&meta.start_time);
    t.ended_at.clone_from(&meta.last_updated);
    if let (Some(a), Some(b)) = (&meta.start_time, &meta.last_updated) {
        t.usage.wall_seconds = crate::util::seconds_between(a, b);
    }
    if meta.kind.as_deref() == Some("subagent") {
        t.notes.push("a subagent's session (kind: subagent)".into());
    }
    if let Some(s) = meta.summary.as_ref().filter(|s| !s.is_empty()) {
        t.notes.push(format!("session summary: {s}"));
    }
    t
}

/// Gemini CLI chat sessions.
pub struct GeminiSession;

impl Adapter for GeminiSession {
    fn name(&self) -> &'static str {
        SESSION
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "Gemini CLI chat session (session-*.json, or the .jsonl record stream)"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        if let Some(j) = p.jsonl.as_ref()
            && j.has("sessionId")
            && j.has("projectHash")
        {
            return marker("session record stream (first line: sessionId, projectHash)");
        }
        let Some(j) = &p.json else { return Err("not JSON".into()) };
        if j.top_is_array {
            return Err("a list, not a session".into());
        }
        let messages_ok = j.keys.get("messages").is_some_and(|v| *v == Scalar::Array) || j.truncated || !j.has("messages");
        if j.has("sessionId") && (j.has("projectHash") || j.has("startTime")) && messages_ok {
            return marker("chat session (sessionId, projectHash/startTime, messages)");
        }
        Err("no sessionId with projectHash/startTime".into())
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        let src = Source::read(&unit.primary.path, &unit.primary.display)?;
        let text = src.text()?;
        let first_line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let is_stream =
            serde_json::from_str::<Value>(first_line).is_ok() && text.trim_end().lines().filter(|l| !l.trim().is_empty()).count() > 1;
        let t = if is_stream { parse_stream(&src, out)? } else { parse_document(&src, text)? };
        out.emit(t);
        Ok(())
    }
}

#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
fn parse_document(src: &Source, text: &str) -> Result<Trajectory, InputError> {
    let doc: RawSession<'_> =
        serde_json::from_str(text).map_err(|e| InputError::from_json(&src.display, &src.bytes, "Gemini CLI session", &e))?;
    let mut msgs = Vec::with_capacity(doc.messages.len());
    for raw in &doc.messages {
        let m: RawMessage = serde_json::from_str(raw.get()).map_err(|e| {
            let base = src.offset_of(raw.get()).unwrap_or(0);
            InputError::from_json_at(&src.display, &src.bytes, base, "Gemini CLI session message", &e)
        })?;
        msgs.push((m, src.span_of(0, raw.get())));
    }
    let mut t = session_record(src, &doc.meta, SESSION, "gemini-cli session json");
    build(&mut t, &msgs);
    Ok(t)
}

/// The `.jsonl` record stream, replayed the way the CLI loads it.
#[expect(clippy::result_large_err, reason = "InputError carries its excerpt; it is the error every adapter returns")]
fn parse_stream(src: &Source, out: &mut Output<'_>) -> Result<Trajectory, InputError> {
    let mut meta = RawMeta::default();
    // Message order is the order of first appearance; a later line with the same id replaces it.
    let mut msgs: Vec<(String, RawMessage, Option<SourceSpan>)> = Vec::new();
    for line in lines::split(src, &mut out.diagnostics) {
        let v: Value = match lines::parse(src, &line, "Gemini CLI session record") {
            Ok(v) => v,
            Err(e) => {
                out.diagnostics.push(e);
                continue;
            }
        };
        let (start, span) = (line.start, Some(line.span(0)));
        if let Some(id) = v.get("$rewindTo").and_then(Value::as_str) {
            match msgs.iter().position(|(k, _, _)| k == id) {
                Some(p) => msgs.truncate(p),
                None => msgs.clear(),
            }
        } else if let Some(set) = v.get("$set").filter(|s| s.is_object()) {
            if let Some(list) = set.get("messages").and_then(Value::as_array) {
                msgs.clear();
                for m in list {
                    if let (Some(id), Ok(rm)) = (m.get("id").and_then(Value::as_str), serde_json::from_value::<RawMessage>(m.clone())) {
                        msgs.push((id.to_string(), rm, span));
                    }
                }
            }
            merge_meta(&mut meta, set);
        } else if let Some(id) = v.get("id").and_then(Value::as_str) {
            let id = id.to_string();
            match serde_json::from_value::<RawMessage>(v) {
                Ok(rm) => match msgs.iter_mut().find(|(k, _, _)| *k == id) {
                    Some(slot) => *slot = (id, rm, span),
                    None => msgs.push((id, rm, span)),
                },
                Err(e) => out.diagnostics.push(
                    InputError::new(crate::ingest::diag::InputErrorKind::Schema, &src.display, format!("read a session message: {e}"))
                        .at_offset(&src.bytes, start, "this record"),
                ),
            }
        } else if v.get("sessionId").is_some() {
            // The first line, or a whole legacy record converted to one line with its messages.
            for m in v.get("messages").and_then(Value::as_array).into_iter().flatten() {
                if let (Some(id), Ok(rm)) = (m.get("id").and_then(Value::as_str), serde_json::from_value::<RawMessage>(m.clone())) {
                    msgs.push((id.to_string(), rm, span));
                }
            }
            merge_meta(&mut meta, &v);
        }
    }
    let list: Vec<(RawMessage, Option<SourceSpan>)> = msgs.into_iter().map(|(_, m, s)| (m, s)).collect();
    let mut t = session_record(src, &meta, SESSION, "gemini-cli session jsonl");
    build(&mut t, &list);
    Ok(t)
}

fn merge_meta(meta: &mut RawMeta, v: &Value) {
    let s = |k: &str| v.get(k).and_then(Value::as_str).map(ToString::to_string);
    meta.session_id = s("sessionId").or(meta.session_id.take());
    meta.start_time = s("startTime").or(meta.start_time.take());
    meta.last_updated = s("lastUpdated").or(meta.last_updated.take());
    meta.summary = s("summary").or(meta.summary.take());
    meta.kind = s("kind").or(meta.kind.take());
}

/// `gemini -p ... --output-format json` (`JsonOutput`: `{session_id?, response?, stats?,
/// error?, warnings?}`), or the plain text of a headless run (read only with `--format`).
pub struct GeminiHeadless;

#[derive(Deserialize)]
struct RawHeadless {
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    response: Option<String>,
    #[serde(default)]
    stats: Option<Value>,
    #[serde(default)]
    error: Option<RawJsonError>,
    #[serde(default)]
    warnings: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct RawJsonError {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    message: String,
    #[serde(default)]
    code: Value,
}

impl Adapter for GeminiHeadless {
    fn name(&self) -> &'static str {
        HEADLESS
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "Gemini CLI headless output (gemini -p --output-format json; plain text with --format)"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let Some(j) = &p.json else { return Err("not JSON (plain-text output is read only with --format gemini-cli-headless)".into()) };
        if j.top_is_array {
            return Err("a list".into());
        }
        if j.has("stats") && (j.has("stats.models") || j.has("stats.tools")) && (j.has("response") || j.has("error")) {
            return marker("headless JSON output (response, stats.models/tools)");
        }
        if j.has("session_id") && j.has("error.type") && j.has("error.message") && !j.has("stats") {
            return marker("headless JSON error output (session_id, error.type, error.message)");
        }
        Err("no response/stats of a headless run".into())
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        let src = Source::read(&unit.primary.path, &unit.primary.display)?;
        let text = src.text()?;
        let t = if text.trim_start().starts_with('{') {
            let h: RawHeadless = src.json("Gemini CLI headless output")?;
            headless_json(&src, &h)
        } else {
            headless_text(&src, text)
        };
        out.emit(t);
        Ok(())
    }
}

fn headless_json(src: &Source, h: &RawHeadless) -> Trajectory {
    let task = h.session_id.clone().unwrap_or_else(|| file_stem(&src.path));
    let mut t = crate::model::Trajectory::new(task, HARNESS, HEADLESS, 1, vec![src.provenance("transcript")]);
    t.session_id.clone_from(&h.session_id);
    t.provenance.format_version = Some("gemini-cli headless json".into());
    if let Some(r) = &h.response {
        let mut s = Step::new(Role::Assistant, r.clone());
        s.source_span = src.span_of(0, r);
        t.steps.push(s);
    }
    if let Some(stats) = &h.stats {
        read_stats(&mut t, stats);
    }
    for w in h.warnings.iter().flatten() {
        t.notes.push(format!("warning: {w}"));
    }
    t.notes.push("headless output keeps only the final response; the tool calls are counted in stats, not recorded".into());
    t.termination = match &h.error {
        Some(e) => headless_error(&e.kind, &e.message, &e.code),
        None => Termination::of(TerminationKind::AgentStoppedWithoutFinish).with_raw("response", "response (no error)"),
    };
    t
}

/// `stats` is `SessionMetrics`: per-model API and token counts, per-tool call counts.
fn read_stats(t: &mut Trajectory, stats: &Value) {
    let mut any = false;
    let (mut p, mut c, mut r, mut k, mut calls) = (0u64, 0u64, 0u64, 0u64, 0u64);
    for (name, m) in stats.get("models").and_then(Value::as_object).into_iter().flatten() {
        any = true;
        if t.model.is_none() {
            t.model = Some(name.clone());
        }
        p += uint(m.pointer("/tokens/prompt")).unwrap_or(0);
        c += uint(m.pointer("/tokens/candidates")).unwrap_or(0);
        r += uint(m.pointer("/tokens/thoughts")).unwrap_or(0);
        k += uint(m.pointer("/tokens/cached")).unwrap_or(0);
        calls += uint(m.pointer("/api/totalRequests")).unwrap_or(0);
    }
    if any {
        t.usage.prompt_tokens = Some(p);
        t.usage.completion_tokens = Some(c);
        t.usage.reasoning_tokens = Some(r);
        t.usage.cached_tokens = Some(k);
        t.usage.api_calls = Some(calls);
    }
    let by_name: Vec<String> = stats
        .pointer("/tools/byName")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(n, s)| format!("{n} x{} ({} failed)", uint(s.get("count")).unwrap_or(0), uint(s.get("fail")).unwrap_or(0)))
        .collect();
    if !by_name.is_empty() {
        t.notes.push(format!("tool calls per stats.tools.byName: {}", by_name.join(", ")));
    }
}

fn headless_error(kind: &str, message: &str, code: &Value) -> Termination {
    let lower = format!("{kind} {message}").to_ascii_lowercase();
    let mut t = if lower.contains("turn") && (lower.contains("max") || lower.contains("limit")) {
        Termination::budget(Budget::Steps, Enforcer::Harness)
    } else if lower.contains("cancel") {
        Termination::of(TerminationKind::Unknown)
    } else if is_api_error(&lower) || code.as_u64().is_some_and(|c| c == 429 || c >= 500) {
        Termination::of(TerminationKind::Infrastructure)
    } else {
        Termination::of(TerminationKind::HarnessError)
    };
    t.raw = Some(kind.to_string());
    t.source = Some("error.type".into());
    t.detail = Some(message.lines().next().unwrap_or("").chars().take(300).collect());
    t
}

/// Plain text: the response on stdout, and (when stderr was kept with it) the CLI's
/// `Error executing tool NAME: MESSAGE` lines and its turn-limit message.
fn headless_text(src: &Source, text: &str) -> Trajectory {
    static TOOL_ERR: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = TOOL_ERR.get_or_init(|| regex::Regex::new(r"(?m)^Error executing tool ([^:\s]+): (.*)$").expect("static regex"));
    let mut t = crate::model::Trajectory::new(file_stem(&src.path), HARNESS, HEADLESS, 1, vec![src.provenance("transcript")]);
    t.provenance.format_version = Some("gemini-cli headless text".into());
    let mut response = String::new();
    let mut rest = text;
    let mut offset = 0usize;
    while let Some(c) = re.captures(rest) {
        let (Some(whole), Some(name), Some(msg)) = (c.get(0), c.get(1), c.get(2)) else { break };
        response.push_str(&rest[..whole.start()]);
        let mut call = Step::new(Role::Assistant, String::new());
        call.tool_calls.push(crate::model::ToolCall {
            id: None,
            name: name.as_str().to_string(),
            arguments: Value::Null,
            raw_arguments: None,
        });
        call.source_span = Some(src.span(0, offset + whole.start(), whole.len()));
        let at = to_u32(t.steps.len());
        t.steps.push(call);
        let mut r = ToolResult::new(msg.as_str().to_string());
        r.is_error = true;
        r.name = Some(name.as_str().to_string());
        r.call = Some(CallRef { step: at, call: 0 });
        if let Some((n, sentence)) = unknown_tool(msg.as_str()).filter(|(n, _)| n == name.as_str()) {
            r.unknown_tool = Some(sentence);
            r.name = Some(n);
        }
        let mut s = Step::new(Role::Tool, String::new());
        s.tool_results.push(r);
        s.source_span = call_span(&t, at);
        t.steps.push(s);
        offset += whole.end();
        rest = &rest[whole.end()..];
    }
    response.push_str(rest);
    if !t.steps.is_empty() {
        t.notes.push("tool calls are known only from the CLI's error lines; successful calls leave no trace in text output".into());
    }
    let max_turns = response.contains("Reached max session turns");
    let reply = response.trim();
    if !reply.is_empty() {
        let mut s = Step::new(Role::Assistant, reply.to_string());
        s.source_span = src.span_of(0, reply);
        t.steps.push(s);
    }
    t.termination = if max_turns {
        Termination {
            detail: Some("Reached max session turns for this session".into()),
            ..Termination::budget(Budget::Steps, Enforcer::Harness)
        }
    } else if reply.is_empty() {
        Termination::unknown()
    } else {
        Termination::of(TerminationKind::AgentStoppedWithoutFinish).with_raw("response", "stdout")
    };
    t
}

fn call_span(t: &Trajectory, at: u32) -> Option<SourceSpan> {
    t.steps.get(at as usize).and_then(|s| s.source_span)
}

const STREAM: &str = "gemini-cli-stream";

/// `gemini -p ... --output-format stream-json`: one event per line (`JsonStreamEvent` in
/// `packages/core/src/output/types.ts`): `init`, `message` (assistant text arrives as deltas),
/// `tool_use`, `tool_result` (an unknown name fails with error type `tool_not_registered`),
/// `error`, and a final `result` with the status and stats.
pub struct GeminiStream;

impl Adapter for GeminiStream {
    fn name(&self) -> &'static str {
        STREAM
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "Gemini CLI headless stream-json events (init, message, tool_use, tool_result, result)"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let Some(j) = p.jsonl.as_ref() else { return Err("not JSON Lines".into()) };
        if j.str("type") == Some("init") && j.has("session_id") && j.has("model") {
            return marker("stream-json init event (type init, session_id, model)");
        }
        Err("first line is not a stream-json init event".into())
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        let src = Source::read(&unit.primary.path, &unit.primary.display)?;
        let mut t = crate::model::Trajectory::new(file_stem(&src.path), HARNESS, STREAM, 1, vec![src.provenance("transcript")]);
        t.provenance.format_version = Some("gemini-cli stream-json".into());
        // The assistant step text deltas are appended to, until a tool call or another event.
        let mut open_reply: Option<usize> = None;
        let mut saw_result = false;
        for line in lines::split(&src, &mut out.diagnostics) {
            let v: Value = match lines::parse(&src, &line, "Gemini CLI stream event") {
                Ok(v) => v,
                Err(e) => {
                    out.diagnostics.push(e);
                    continue;
                }
            };
            let span = Some(line.span(0));
            let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            match v.get("type").and_then(Value::as_str).unwrap_or("") {
                "init" => {
                    t.session_id = v.get("session_id").and_then(Value::as_str).map(ToString::to_string);
                    if let Some(id) = &t.session_id {
                        t.task_id.clone_from(id);
                    }
                    t.model = v.get("model").and_then(Value::as_str).map(ToString::to_string);
                    t.started_at = v.get("timestamp").and_then(Value::as_str).map(ToString::to_string);
                }
                "message" if s("role") == "assistant" => match open_reply {
                    Some(ix) => t.steps[ix].text.push_str(&s("content")),
                    None => {
                        let mut step = Step::new(Role::Assistant, s("content"));
                        step.source_span = span;
                        step.timestamp = v.get("timestamp").and_then(Value::as_str).map(ToString::to_string);
                        open_reply = Some(t.steps.len());
                        t.steps.push(step);
                    }
                },
                "message" => {
                    open_reply = None;
                    let mut step = Step::new(Role::User, s("content"));
                    step.source_span = span;
                    t.steps.push(step);
                }
                "tool_use" => {
                    let ix = match open_reply {
                        Some(ix) => ix,
                        None => {
                            let mut step = Step::new(Role::Assistant, String::new());
                            step.source_span = span;
                            t.steps.push(step);
                            t.steps.len() - 1
                        }
                    };
                    let id = v.get("tool_id").and_then(Value::as_str).map(ToString::to_string);
                    t.steps[ix].tool_calls.push(tool_call(id, s("tool_name"), v.get("parameters").unwrap_or(&Value::Null)));
                    open_reply = Some(ix);
                }
                "tool_result" => {
                    open_reply = None;
                    let err_type = v.pointer("/error/type").and_then(Value::as_str).unwrap_or("");
                    let err_msg = v.pointer("/error/message").and_then(Value::as_str).unwrap_or("");
                    let output = v.get("output").and_then(Value::as_str).map_or_else(|| err_msg.to_string(), ToString::to_string);
                    let mut r = ToolResult::new(output);
                    r.call_id = v.get("tool_id").and_then(Value::as_str).map(ToString::to_string);
                    r.is_error = s("status") == "error";
                    r.exit_code = shell_exit_code(&r.output);
                    if err_type == "tool_not_registered" || unknown_tool(err_msg).is_some() {
                        r.unknown_tool = Some(unknown_tool(err_msg).map_or_else(|| err_msg.to_string(), |(_, sentence)| sentence));
                    }
                    let mut step = Step::new(Role::Tool, String::new());
                    step.source_span = span;
                    step.tool_results.push(r);
                    t.steps.push(step);
                }
                "error" => {
                    open_reply = None;
                    let mut step = Step::new(Role::Environment, format!("[{}] {}", s("severity"), s("message")));
                    step.source_span = span;
                    t.steps.push(step);
                }
                "result" => {
                    open_reply = None;
                    saw_result = true;
                    t.ended_at = v.get("timestamp").and_then(Value::as_str).map(ToString::to_string);
                    if let Some(st) = v.get("stats") {
                        t.usage.prompt_tokens = uint(st.get("input_tokens"));
                        t.usage.completion_tokens = uint(st.get("output_tokens"));
                        t.usage.cached_tokens = uint(st.get("cached"));
                        #[expect(clippy::cast_precision_loss, reason = "milliseconds of one run")]
                        {
                            t.usage.wall_seconds = uint(st.get("duration_ms")).map(|ms| ms as f64 / 1000.0);
                        }
                    }
                    t.termination = if s("status") == "error" {
                        let kind = v.pointer("/error/type").and_then(Value::as_str).unwrap_or("error");
                        let msg = v.pointer("/error/message").and_then(Value::as_str).unwrap_or("");
                        headless_error(kind, msg, &Value::Null)
                    } else {
                        Termination::of(TerminationKind::AgentStoppedWithoutFinish).with_raw(s("status"), "result.status")
                    };
                }
                _ => {}
            }
        }
        if !saw_result {
            t.notes.push("the stream has no result event: the run was cut off".into());
        }
        out.emit(t);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_tool_rejections_of_both_generations() {
        let (n, s) =
            unknown_tool("Tool \"search_web\" not found in registry. Tools must use the exact names that are registered.").unwrap();
        assert_eq!((n.as_str(), s.as_str()), ("search_web", "Tool \"search_web\" not found in registry."));
        assert_eq!(unknown_tool("Tool \"x\" not found. Did you mean \"y\"?").unwrap().0, "x");
        assert!(unknown_tool("File not found.").is_none());
    }

    #[test]
    fn part_lists_read_as_text() {
        let v: Value = serde_json::json!([{"text": "a"}, {"functionResponse": {"response": {"error": "boom"}}}]);
        assert_eq!(parts_text(&v), "a\nboom");
        assert_eq!(parts_text(&serde_json::json!({"text": "x"})), "x");
    }
}
