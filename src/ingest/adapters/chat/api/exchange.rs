//! One logged call: the request, the response or the error it got, read from whichever shape
//! the log gives it (a request/response pair, an OpenAI batch line, an Anthropic batch result,
//! a cassette interaction, a Gemini batch line). Bodies written as text are parsed, streamed
//! ones put back together.

use serde_json::Value;

use super::Provider;
use super::stream::assemble_sse;
use crate::ingest::adapters::chat::gemini;
use crate::ingest::adapters::shared::common::num;
use crate::model::SourceSpan;

/// One request with its response, as logged.
#[derive(Debug, Default)]
pub struct Exchange {
    pub request: Option<Value>,
    pub response: Option<Value>,
    pub status: Option<u64>,
    /// The error a failed call returned (HTTP error body, batch `error`), and where it was read.
    pub error: Option<String>,
    pub error_field: &'static str,
    /// An Anthropic batch result's `type` when it is not `succeeded` (`errored`, `expired`, ...).
    pub result_type: Option<String>,
    pub span: Option<SourceSpan>,
    /// `metadata.task_id`, `custom_id`, or a Gemini batch line's `key`.
    pub key: Option<String>,
    pub uri: Option<String>,
    /// The body could not be read (binary, compressed); said in the notes.
    pub unreadable: Option<String>,
    /// The provider whose batch format the entry has.
    pub batch: Option<Provider>,
    /// The request's message count, once its history was dropped.
    pub messages: Option<usize>,
}

/// A request's turns: OpenAI and Anthropic `messages`, Gemini `contents`.
pub fn turns(req: &Value) -> Option<&Vec<Value>> {
    req.get("messages").or_else(|| req.get("contents")).and_then(Value::as_array)
}

/// Mutable [`turns`].
fn turns_mut(req: &mut Value) -> Option<&mut Vec<Value>> {
    let key = if req.get("messages").is_some() { "messages" } else { "contents" };
    req.get_mut(key).and_then(Value::as_array_mut)
}

impl Exchange {
    pub fn req_len(&self) -> usize {
        self.messages.unwrap_or_else(|| self.request.as_ref().and_then(turns).map_or(0, Vec::len))
    }

    /// Drops the history of a request the next one repeats, keeping its length and opening
    /// message: a long log holds each conversation's history once, not once per call.
    pub fn forget_history(&mut self) {
        let n = self.req_len();
        if let Some(msgs) = self.request.as_mut().and_then(turns_mut) {
            msgs.truncate(1);
            self.messages = Some(n);
        }
    }

    pub fn ok(&self) -> bool {
        self.response.is_some() && self.error.is_none() && self.status.is_none_or(|s| s < 400)
    }

    pub fn provider(&self) -> Option<Provider> {
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
            if gemini::is_response(r) {
                return Some(Provider::Gemini);
            }
        }
        if let Some(u) = &self.uri {
            // The method, not the host: Google's hosts also serve OpenAI-compatible endpoints.
            if u.contains(":generateContent") || u.contains(":streamGenerateContent") {
                return Some(Provider::Gemini);
            }
            if u.contains("anthropic") || u.contains("/v1/messages") {
                return Some(Provider::Anthropic);
            }
            if u.contains("/chat/completions") || u.contains("openai") {
                return Some(Provider::OpenAi);
            }
        }
        let req = self.request.as_ref()?;
        if req.get("contents").is_some() {
            return Some(Provider::Gemini);
        }
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
pub fn body_of(part: &Value, ex: &mut Exchange, is_response: bool) {
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
    } else if ["messages", "choices", "content", "contents"].iter().any(|k| part.get(*k).is_some()) || gemini::is_response(part) {
        Some(part.clone())
    } else {
        None
    };
    if is_response {
        match body.map(streamed_array) {
            Some(b)
                if b.get("error").is_some_and(|e| !e.is_null())
                    && b.get("choices").is_none()
                    && b.get("content").is_none()
                    && b.get("candidates").is_none() =>
            {
                ex.error = Some(error_message(&b));
                ex.error_field = "response.body.error";
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

/// A `streamGenerateContent` body sent without `alt=sse` is a JSON array of chunks, and an
/// error during it an array holding the error: either becomes the one body it stands for.
fn streamed_array(b: Value) -> Value {
    let Value::Array(items) = &b else { return b };
    if let Some(err) = items.iter().find(|i| i.get("error").is_some_and(|e| !e.is_null())) {
        return err.clone();
    }
    if !items.is_empty() && items.iter().all(gemini::is_response) {
        return gemini::merge_chunks(items).unwrap_or(b);
    }
    b
}

/// The error a body carries: OpenAI and Anthropic `{type, message}`, Google's
/// `{code, message, status}` (the status names the kind, `RESOURCE_EXHAUSTED`).
fn error_message(b: &Value) -> String {
    let e = b.get("error").unwrap_or(b);
    match e {
        Value::String(s) => s.clone(),
        other => {
            let msg = other.get("message").and_then(Value::as_str).unwrap_or_default();
            let kind = ["type", "status", "code"].iter().find_map(|k| other.get(*k).and_then(Value::as_str)).unwrap_or_default();
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

/// The key a log entry names its conversation by.
pub fn key_of(v: &Value) -> Option<String> {
    let s = |p: &str| v.pointer(p).and_then(Value::as_str).filter(|s| !s.is_empty()).map(ToString::to_string);
    s("/metadata/task_id")
        .or_else(|| s("/request/metadata/task_id"))
        .or_else(|| s("/request/body/metadata/task_id"))
        .or_else(|| s("/body/metadata/task_id"))
        .or_else(|| s("/custom_id"))
        .or_else(|| s("/key").filter(|_| ["request", "response", "error"].iter().any(|k| v.get(*k).is_some())))
}

/// One JSON log entry (a pair, a batch output or input line, a batch result) as an exchange.
pub fn exchange_from(v: &Value) -> Result<Exchange, String> {
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
            Some(other) => {
                ex.result_type = Some(other.to_string());
                ex.error = r.get("error").map(error_message);
                ex.error_field = "result.error";
            }
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
        ex.error_field = "error";
        any = true;
    }
    // A Vertex AI batch prediction line that failed says why in `status` instead of answering.
    if ex.response.is_none()
        && ex.error.is_none()
        && let Some(st) = v.get("status").and_then(Value::as_str).filter(|s| !s.trim().is_empty())
    {
        ex.error = Some(st.to_string());
        ex.error_field = "status";
    }
    if !any {
        return Err("no `request`, `response` or batch `result`".into());
    }
    if ex.request.as_ref().is_some_and(|r| r.get("messages").is_some_and(|m| !m.is_array())) {
        return Err("`messages` is not a list".into());
    }
    // Gemini's SDK also takes one content, or a bare string, for a single turn.
    if ex.request.as_ref().is_some_and(|r| r.get("contents").is_some_and(|m| !(m.is_array() || m.is_object() || m.is_string()))) {
        return Err("`contents` is not a list of turns".into());
    }
    Ok(ex)
}
