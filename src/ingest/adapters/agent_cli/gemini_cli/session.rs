//! Chat sessions: `session-*.json` (a `ConversationRecord` of
//! `packages/core/src/services/chatRecordingTypes.ts`: `{sessionId, projectHash, startTime,
//! lastUpdated, messages}`) and the `.jsonl` record stream newer versions append to.
//!
//! Each message has `type` `user`/`gemini`/`info`/`error`/`warning`, `content` (a string or
//! Gemini `Part`s), and gemini messages carry `toolCalls` (each with its own `result` —
//! `functionResponse` parts — and `status` success/error/cancelled), `thoughts` and `tokens`.
//! The JSONL form writes a metadata line, then one line per message (a later line with the same
//! `id` replaces the earlier one), `{"$rewindTo": id}` (drops that message and everything after
//! it) and `{"$set": {...}}` (metadata, or a checkpoint of all `messages`).
//!
//! A session has no finish protocol and no end status: an `error` message that closes it is
//! the only signal; otherwise its last steps say how it ended.

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::{HARNESS, file_stem, parts_text, shell_exit_code};
use crate::ingest::adapters::shared::build::{StepBuilder, to_u32};
use crate::ingest::adapters::shared::common::tool_call;
use crate::ingest::adapters::shared::lines;
use crate::ingest::diag::InputError;
use crate::ingest::format::{Adapter, Ctx, FileRole, Output, Sniff, Unit, marker};
use crate::ingest::probe::{Probe, Scalar};
use crate::ingest::source::Source;
use crate::model::{CallRef, Reasoning, Role, SourceSpan, Step, Tokens, ToolResult, Trajectory};

const SESSION: &str = "gemini-cli";

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

/// Builds steps from session messages (in their final order) and finishes the record.
fn build(t: &mut Trajectory, msgs: &[(RawMessage, Option<SourceSpan>)]) {
    let mut b = StepBuilder::new();
    // The step each message became, for the signal of the one that closes the session.
    let mut at: Vec<usize> = Vec::with_capacity(msgs.len());
    for (m, span) in msgs {
        let text = parts_text(&m.content);
        let time = m.timestamp.clone();
        let step = match m.kind.as_str() {
            "gemini" => {
                let mut s = Step::new(Role::Assistant, text);
                let thoughts: Vec<String> = m
                    .thoughts
                    .iter()
                    .flatten()
                    .map(|th| if th.subject.is_empty() { th.description.clone() } else { format!("{}: {}", th.subject, th.description) })
                    .collect();
                if let Some(tok) = &m.tokens {
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
                let ix = b.push(s, *span, time);
                let results = results_step(calls, ix);
                if !results.tool_results.is_empty() {
                    b.push(results, *span, None);
                }
                ix
            }
            "user" => b.push(Step::new(Role::User, text), *span, time),
            other => {
                // info / error / warning: the CLI talking, not the model.
                let shown = if other.is_empty() { text } else { format!("[{other}] {text}") };
                b.push(Step::new(Role::Environment, shown), *span, time)
            }
        };
        at.push(step);
    }
    b.finish(t);
    if t.steps.iter().any(|s| s.tokens.is_some()) {
        let sum = |f: fn(&Tokens) -> Option<u64>| crate::util::sat_sum(t.steps.iter().filter_map(|s| s.tokens.as_ref()).filter_map(f));
        t.usage.prompt_tokens = Some(sum(|k| k.prompt));
        t.usage.completion_tokens = Some(sum(|k| k.completion));
        t.usage.reasoning_tokens = Some(sum(|k| k.reasoning));
        t.usage.cached_tokens = Some(sum(|k| k.cached));
    }
    t.usage.api_calls = Some(t.steps.iter().filter(|s| s.role == Role::Assistant).count() as u64).filter(|n| *n > 0);
    end_signals(t, msgs, &at);
}

/// The results a gemini message's calls carry, answering the calls of step `at`.
fn results_step(calls: &[RawToolCall], at: usize) -> Step {
    let mut results = Step::new(Role::Tool, String::new());
    for (k, c) in calls.iter().enumerate() {
        let response = match &c.result {
            Value::Null => None,
            other => Some(other),
        };
        let status = c.status.as_deref().unwrap_or("");
        if response.is_none() && status.is_empty() {
            // Still running when the session was written: no result to record.
            continue;
        }
        let mut output = response.map(parts_text).unwrap_or_default();
        if output.is_empty() {
            output = parts_text(&c.result_display);
        }
        let has_error = response.is_some_and(|r| {
            let items: Vec<&Value> = r.as_array().map_or_else(|| vec![r], |a| a.iter().collect());
            items.iter().any(|p| p.pointer("/functionResponse/response/error").is_some())
        });
        let mut r = ToolResult::new(output);
        r.call_id.clone_from(&c.id);
        r.name = Some(c.name.clone());
        r.call = Some(CallRef { step: to_u32(at), call: to_u32(k) });
        r.is_error = has_error || matches!(status, "error" | "cancelled");
        r.exit_code = shell_exit_code(&r.output);
        results.tool_results.push(r);
    }
    results
}

/// How the session closed. An `error` message after the last reply (info and warning messages
/// aside) is the error that ended it; any other end is told by the steps, with a note of what
/// was left open.
fn end_signals(t: &mut Trajectory, msgs: &[(RawMessage, Option<SourceSpan>)], at: &[usize]) {
    let Some(i) = msgs.iter().rposition(|(m, _)| !matches!(m.kind.as_str(), "info" | "warning")) else { return };
    let (last, span) = &msgs[i];
    match last.kind.as_str() {
        "error" => {
            t.signals.error("messages[type=error].content", parts_text(&last.content)).at_step(at[i]).with_span(*span);
        }
        "gemini" if last.tool_calls.as_ref().is_some_and(|c| !c.is_empty()) => {
            let cancelled = last.tool_calls.iter().flatten().any(|c| c.status.as_deref() == Some("cancelled"));
            t.notes.push(if cancelled {
                "the session ends with a tool call the user cancelled".into()
            } else {
                "the session ends after tool calls, before the model's next reply".into()
            });
        }
        "user" => t.notes.push("the session ends with a user message the model did not answer".into()),
        _ => {}
    }
}

fn session_record(src: &Source, meta: &RawMeta, format: &str) -> Trajectory {
    let task = meta.session_id.clone().unwrap_or_else(|| file_stem(&src.path));
    let mut t = Trajectory::new(task, HARNESS, SESSION, 1, vec![src.provenance("transcript")]);
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

    fn versions(&self) -> &'static str {
        "session .json and newer .jsonl stream"
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
    let mut t = session_record(src, &doc.meta, "gemini-cli session json");
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
    let mut t = session_record(src, &meta, "gemini-cli session jsonl");
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
