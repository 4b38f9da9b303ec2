//! OpenTelemetry GenAI spans: OTLP JSON exports, flat JSON lists of spans, and JSONL of either.
//!
//! The GenAI semantic conventions (`docs/gen-ai/gen-ai-spans.md`, `gen-ai-agent-spans.md`)
//! describe an agent run as a trace: an `invoke_agent` span, `chat` spans for model calls
//! (`gen_ai.input.messages` / `gen_ai.output.messages`, or before v1.37 the `gen_ai.prompt.N.*`
//! / `gen_ai.completion.N.*` attributes and `gen_ai.content.prompt` / `gen_ai.content.completion`
//! events), and `execute_tool` spans for tool calls (`gen_ai.tool.name`, `gen_ai.tool.call.id`,
//! `gen_ai.tool.call.arguments` / `result`, span status and `error.type` for failures). Spans
//! are grouped into one record per trace and ordered by start time. Content capture is opt-in
//! in every instrumentation, so a trace may hold only span names, usage and tool spans: calls
//! are then rebuilt from the `execute_tool` spans onto the model turn before them.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::ingest::adapters::shared::common::{is_finish_tool, tool_call, uint};
use crate::ingest::diag::{InputError, InputErrorKind};
use crate::ingest::format::{Adapter, Ctx, FileRole, Output, Sniff, Unit, marker, structure};
use crate::ingest::probe::{JsonShape, Probe};
use crate::ingest::source::Source;
use crate::model::{
    Budget, CallRef, DeclaredTool, Enforcer, Reasoning, Role, SourceSpan, Step, Termination, TerminationKind, Tokens, ToolResult,
    Trajectory,
};

const ADAPTER: &str = "otel-genai";

/// An OTLP export request (`ExportTraceServiceRequest` in JSON), or the collector's file
/// exporter line.
#[derive(Deserialize)]
struct RawExport<'a> {
    #[serde(rename = "resourceSpans", alias = "resource_spans", borrow, default)]
    resource_spans: Vec<RawResourceSpans<'a>>,
}

#[derive(Deserialize)]
struct RawResourceSpans<'a> {
    #[serde(default)]
    resource: Option<RawResource>,
    #[serde(rename = "scopeSpans", alias = "scope_spans", alias = "instrumentationLibrarySpans", borrow, default)]
    scope_spans: Vec<RawScopeSpans<'a>>,
}

#[derive(Deserialize)]
struct RawResource {
    #[serde(default)]
    attributes: Option<Value>,
}

#[derive(Deserialize)]
struct RawScopeSpans<'a> {
    #[serde(borrow, default)]
    spans: Vec<&'a RawValue>,
}

/// One span, in the OTLP JSON shape (`traceId`, `attributes: [{key, value: {stringValue}}]`,
/// `status.code`) or the SDK console exporter's (`context.trace_id`, `attributes: {k: v}`,
/// `status.status_code`, ISO times).
#[derive(Deserialize)]
struct RawSpan {
    #[serde(rename = "traceId", alias = "trace_id", default)]
    trace_id: Option<String>,
    #[serde(rename = "spanId", alias = "span_id", default)]
    span_id: Option<String>,
    #[serde(rename = "parentSpanId", alias = "parent_span_id", alias = "parent_id", default)]
    parent: Option<String>,
    #[serde(default)]
    context: Option<RawContext>,
    #[serde(default)]
    name: String,
    #[serde(rename = "startTimeUnixNano", alias = "start_time_unix_nano", alias = "start_time", default)]
    start: Option<Value>,
    #[serde(rename = "endTimeUnixNano", alias = "end_time_unix_nano", alias = "end_time", default)]
    end: Option<Value>,
    #[serde(default)]
    attributes: Option<Value>,
    #[serde(default)]
    events: Vec<RawSpanEvent>,
    #[serde(default)]
    status: Option<Value>,
    /// Console exporter: the resource rides on each span.
    #[serde(default)]
    resource: Option<RawResource>,
}

#[derive(Deserialize)]
struct RawContext {
    #[serde(default)]
    trace_id: Option<String>,
    #[serde(default)]
    span_id: Option<String>,
}

#[derive(Deserialize)]
struct RawSpanEvent {
    #[serde(default)]
    name: String,
    #[serde(default)]
    attributes: Option<Value>,
}

type Attrs = BTreeMap<String, Value>;

/// A span reduced to what a trajectory needs.
struct Span {
    trace: String,
    id: String,
    parent: Option<String>,
    name: String,
    start: Option<i128>,
    end: Option<i128>,
    attrs: Attrs,
    events: Vec<(String, Attrs)>,
    error: bool,
    status_message: Option<String>,
    service: Option<String>,
    span: Option<SourceSpan>,
    /// Position in the file, to break ties of equal start times.
    seq: usize,
}

/// Attributes whose values are structured (JSON) even when recorded as strings.
const STRUCTURED: &[&str] = &[
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.tool.definitions",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "gen_ai.prompt",
    "gen_ai.completion",
    "gen_ai.response.finish_reasons",
];

/// An OTLP `AnyValue` as plain JSON.
fn any_value(v: &Value) -> Value {
    let Some(o) = v.as_object() else { return v.clone() };
    if let Some(s) = o.get("stringValue") {
        return s.clone();
    }
    if let Some(b) = o.get("boolValue") {
        return b.clone();
    }
    if let Some(i) = o.get("intValue") {
        // int64 is a string in OTLP JSON.
        return match i {
            Value::String(s) => s.parse::<i64>().map_or_else(|_| i.clone(), Value::from),
            other => other.clone(),
        };
    }
    if let Some(d) = o.get("doubleValue") {
        return d.clone();
    }
    if let Some(a) = o.get("arrayValue") {
        return Value::Array(a.get("values").and_then(Value::as_array).map(|vs| vs.iter().map(any_value).collect()).unwrap_or_default());
    }
    if let Some(kv) = o.get("kvlistValue") {
        let mut m = serde_json::Map::new();
        for e in kv.get("values").and_then(Value::as_array).into_iter().flatten() {
            if let Some(k) = e.get("key").and_then(Value::as_str) {
                m.insert(k.to_string(), e.get("value").map_or(Value::Null, any_value));
            }
        }
        return Value::Object(m);
    }
    if let Some(b) = o.get("bytesValue") {
        return b.clone();
    }
    if o.is_empty() { Value::Null } else { v.clone() }
}

/// Attributes from a `[{key, value}]` list (OTLP) or a plain map (console exporter), with
/// structured values decoded from their JSON strings.
fn attrs_of(v: Option<&Value>) -> Attrs {
    let mut out = Attrs::new();
    match v {
        Some(Value::Array(kvs)) => {
            for kv in kvs {
                if let Some(k) = kv.get("key").and_then(Value::as_str) {
                    out.insert(k.to_string(), kv.get("value").map_or(Value::Null, any_value));
                }
            }
        }
        Some(Value::Object(m)) => {
            for (k, v) in m {
                out.insert(k.clone(), v.clone());
            }
        }
        _ => {}
    }
    for (k, v) in &mut out {
        if STRUCTURED.contains(&k.as_str())
            && let Value::String(s) = v
        {
            let t = s.trim_start();
            if (t.starts_with('[') || t.starts_with('{'))
                && let Ok(parsed) = serde_json::from_str::<Value>(s)
            {
                *v = parsed;
            }
        }
    }
    out
}

/// Nanoseconds since the epoch from a `*UnixNano` (string or number) or an ISO time.
fn nanos(v: Option<&Value>) -> Option<i128> {
    match v? {
        Value::Number(n) => n.as_u64().map(i128::from).or_else(|| n.as_f64().map(|f| f as i128)),
        Value::String(s) => s.parse::<i128>().ok().or_else(|| crate::util::parse_time(s).map(|t| t.as_nanosecond())),
        _ => None,
    }
}

fn iso(ns: i128) -> Option<String> {
    jiff::Timestamp::from_nanosecond(ns).ok().map(|t| t.to_string())
}

fn str_attr<'a>(a: &'a Attrs, key: &str) -> Option<&'a str> {
    a.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

fn span_from(raw: RawSpan, service: Option<&str>, span: Option<SourceSpan>, seq: usize) -> Option<Span> {
    let trace = raw.trace_id.or_else(|| raw.context.as_ref().and_then(|c| c.trace_id.clone()))?;
    let id = raw.span_id.or_else(|| raw.context.as_ref().and_then(|c| c.span_id.clone())).unwrap_or_default();
    let attrs = attrs_of(raw.attributes.as_ref());
    let status = raw.status.unwrap_or(Value::Null);
    let code = status.get("code").or_else(|| status.get("status_code"));
    let error = match code {
        Some(Value::Number(n)) => n.as_u64() == Some(2),
        Some(Value::String(s)) => s.ends_with("ERROR"),
        _ => false,
    };
    let status_message = status
        .get("message")
        .or_else(|| status.get("description"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(ToString::to_string);
    let own_service =
        raw.resource.as_ref().map(|r| attrs_of(r.attributes.as_ref())).and_then(|a| str_attr(&a, "service.name").map(ToString::to_string));
    Some(Span {
        trace,
        id,
        parent: raw.parent.filter(|p| !p.is_empty()),
        name: raw.name,
        start: nanos(raw.start.as_ref()),
        end: nanos(raw.end.as_ref()),
        attrs,
        events: raw.events.into_iter().map(|e| (e.name, attrs_of(e.attributes.as_ref()))).collect(),
        error,
        status_message,
        service: own_service.or_else(|| service.map(ToString::to_string)),
        span,
        seq,
    })
}

/// The operation a span performs: `gen_ai.operation.name`, else the first word of its name
/// (`chat gpt-4o`, `execute_tool get_weather`), else `chat` for pre-1.37 model spans.
fn operation(s: &Span) -> Option<&str> {
    if let Some(op) = str_attr(&s.attrs, "gen_ai.operation.name") {
        return Some(op);
    }
    let first = s.name.split_whitespace().next().unwrap_or_default();
    if ["chat", "text_completion", "generate_content", "execute_tool", "invoke_agent", "create_agent"].contains(&first) {
        return Some(first);
    }
    let legacy_model = s.attrs.keys().any(|k| k.starts_with("gen_ai.prompt") || k.starts_with("gen_ai.completion"))
        || (s.attrs.contains_key("gen_ai.system") && s.attrs.contains_key("gen_ai.request.model"));
    legacy_model.then_some("chat")
}

fn is_model_call(op: &str) -> bool {
    matches!(op, "chat" | "text_completion" | "generate_content")
}

/// Reads every span of a source: spans that do not parse become diagnostics.
struct Reader<'a> {
    src: &'a Source,
    spans: Vec<Span>,
}

impl<'a> Reader<'a> {
    fn push_raw(&mut self, raw: &RawValue, service: Option<&str>, diags: &mut Vec<InputError>) {
        match serde_json::from_str::<RawSpan>(raw.get()) {
            Ok(r) => {
                let seq = self.spans.len();
                if let Some(s) = span_from(r, service, self.src.span_of(0, raw.get()), seq) {
                    self.spans.push(s);
                }
            }
            Err(e) => {
                let base = self.src.offset_of(raw.get()).unwrap_or(0);
                diags.push(InputError::from_json_at(&self.src.display, &self.src.bytes, base, "OpenTelemetry span", &e));
            }
        }
    }

    /// An export request or a single span, held in `raw`.
    fn push_value(&mut self, raw: &RawValue, diags: &mut Vec<InputError>) -> Result<(), serde_json::Error> {
        let text = raw.get().trim_start();
        if text.starts_with('[') {
            let items: Vec<&RawValue> = serde_json::from_str(raw.get())?;
            for item in items {
                self.push_value(item, diags)?;
            }
            return Ok(());
        }
        if text.contains("\"resourceSpans\"") || text.contains("\"resource_spans\"") {
            let export: RawExport<'_> = serde_json::from_str(raw.get())?;
            for rs in export.resource_spans {
                let resource = rs.resource.as_ref().map(|r| attrs_of(r.attributes.as_ref())).unwrap_or_default();
                let service = str_attr(&resource, "service.name");
                for ss in rs.scope_spans {
                    for sp in ss.spans {
                        self.push_raw(sp, service, diags);
                    }
                }
            }
            return Ok(());
        }
        self.push_raw(raw, None, diags);
        Ok(())
    }
}

/// Lines that each start a JSON object: a JSON Lines file rather than one document.
fn looks_like_jsonl(text: &str) -> bool {
    text.lines().filter(|l| l.starts_with('{') && l.trim_end().len() > 1).take(2).count() == 2
}

/// Text of a list of message parts (`text`, `reasoning`; other parts are named).
fn parts_text(parts: &[Value]) -> (String, Option<String>) {
    let mut text = Vec::new();
    let mut reasoning = Vec::new();
    for p in parts {
        let kind = p.get("type").and_then(Value::as_str).unwrap_or("text");
        let body = p.get("content").or_else(|| p.get("text")).and_then(Value::as_str);
        match kind {
            "text" => text.extend(body.map(ToString::to_string)),
            "reasoning" | "thinking" => reasoning.extend(body.map(ToString::to_string)),
            "tool_call" | "tool_call_response" => {}
            other => text.push(format!("[{other}]")),
        }
    }
    (text.join("\n"), (!reasoning.is_empty()).then(|| reasoning.join("\n")))
}

/// One message of `gen_ai.input.messages` / `gen_ai.output.messages` (parts), or an
/// OpenAI-style message (`content`, `tool_calls`, `tool_call_id`) as older instrumentations
/// recorded them.
struct Message {
    role: String,
    text: String,
    reasoning: Option<String>,
    calls: Vec<(Option<String>, String, Value)>,
    responses: Vec<(Option<String>, String)>,
    finish_reason: Option<String>,
}

fn message(v: &Value) -> Message {
    let role = v.get("role").and_then(Value::as_str).unwrap_or("user").to_string();
    let finish_reason = v.get("finish_reason").and_then(Value::as_str).map(ToString::to_string);
    let mut m = Message { role, text: String::new(), reasoning: None, calls: Vec::new(), responses: Vec::new(), finish_reason };
    if let Some(parts) = v.get("parts").and_then(Value::as_array) {
        (m.text, m.reasoning) = parts_text(parts);
        for p in parts {
            let id = p.get("id").and_then(Value::as_str).map(|s| s.trim().to_string());
            match p.get("type").and_then(Value::as_str) {
                Some("tool_call") => {
                    let name = p.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
                    m.calls.push((id, name, p.get("arguments").cloned().unwrap_or(Value::Null)));
                }
                Some("tool_call_response") => {
                    let r = p.get("response").or_else(|| p.get("result")).unwrap_or(&Value::Null);
                    m.responses.push((id, text_of(r)));
                }
                _ => {}
            }
        }
        return m;
    }
    m.text = crate::ingest::adapters::shared::common::content_text(v.get("content").unwrap_or(&Value::Null));
    for c in v.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
        let f = c.get("function").unwrap_or(c);
        let name = f.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
        let id = c.get("id").and_then(Value::as_str).map(ToString::to_string);
        m.calls.push((id, name, f.get("arguments").cloned().unwrap_or(Value::Null)));
    }
    if m.role == "tool" {
        let id = v.get("tool_call_id").or_else(|| v.get("id")).and_then(Value::as_str).map(ToString::to_string);
        m.responses.push((id, std::mem::take(&mut m.text)));
    }
    m
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Messages from the pre-1.37 indexed attributes: `gen_ai.prompt.0.role`,
/// `gen_ai.prompt.0.content`, `gen_ai.completion.0.tool_calls.0.name`, ...
fn indexed_messages(a: &Attrs, prefix: &str) -> Vec<Value> {
    let mut by_ix: BTreeMap<usize, serde_json::Map<String, Value>> = BTreeMap::new();
    let mut calls: BTreeMap<(usize, usize), serde_json::Map<String, Value>> = BTreeMap::new();
    for (k, v) in a {
        let Some(rest) = k.strip_prefix(prefix).and_then(|r| r.strip_prefix('.')) else { continue };
        let Some((ix, field)) = rest.split_once('.') else { continue };
        let Ok(ix) = ix.parse::<usize>() else { continue };
        if let Some(call) = field.strip_prefix("tool_calls.") {
            if let Some((cix, cfield)) = call.split_once('.')
                && let Ok(cix) = cix.parse::<usize>()
            {
                calls.entry((ix, cix)).or_default().insert(cfield.to_string(), v.clone());
            }
            continue;
        }
        by_ix.entry(ix).or_default().insert(field.to_string(), v.clone());
    }
    for ((ix, _), c) in calls {
        let m = by_ix.entry(ix).or_default();
        let list = m.entry("tool_calls").or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(l) = list {
            l.push(Value::Object(c));
        }
    }
    by_ix.into_values().map(Value::Object).collect()
}

/// Messages a model span says it was given and what it answered, from whichever form the
/// instrumentation used.
fn model_messages(s: &Span) -> (Vec<Value>, Vec<Value>) {
    let list = |k: &str| s.attrs.get(k).and_then(Value::as_array).cloned();
    let mut input = list("gen_ai.input.messages").or_else(|| list("gen_ai.prompt")).unwrap_or_default();
    let mut output = list("gen_ai.output.messages").or_else(|| list("gen_ai.completion")).unwrap_or_default();
    if input.is_empty() {
        input = indexed_messages(&s.attrs, "gen_ai.prompt");
    }
    if output.is_empty() {
        output = indexed_messages(&s.attrs, "gen_ai.completion");
    }
    // Span events: `gen_ai.content.prompt` / `gen_ai.content.completion` (JSON in
    // `gen_ai.prompt` / `gen_ai.completion`), or one event per message (`gen_ai.user.message`,
    // `gen_ai.choice`, ...) with the message fields as attributes.
    for (name, a) in &s.events {
        let json = |k: &str| a.get(k).and_then(Value::as_array).cloned().unwrap_or_default();
        match name.as_str() {
            "gen_ai.content.prompt" if input.is_empty() => input = json("gen_ai.prompt"),
            "gen_ai.content.completion" if output.is_empty() => output = json("gen_ai.completion"),
            "gen_ai.system.message" | "gen_ai.user.message" | "gen_ai.assistant.message" | "gen_ai.tool.message" => {
                let role = name.trim_start_matches("gen_ai.").trim_end_matches(".message");
                let mut m: serde_json::Map<String, Value> = a.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                m.entry("role").or_insert_with(|| Value::String(role.to_string()));
                input.push(Value::Object(m));
            }
            "gen_ai.choice" => {
                let mut m = a.get("message").and_then(Value::as_object).cloned().unwrap_or_default();
                m.entry("role").or_insert_with(|| Value::String("assistant".into()));
                if let Some(f) = a.get("finish_reason") {
                    m.insert("finish_reason".into(), f.clone());
                }
                output.push(Value::Object(m));
            }
            _ => {}
        }
    }
    (input, output)
}

fn declared_from(v: &Value) -> Vec<DeclaredTool> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| {
            if let Some(n) = d.as_str() {
                return Some(DeclaredTool { name: n.to_string(), description: None });
            }
            let f = d.get("function").unwrap_or(d);
            let name = f.get("name")?.as_str()?.to_string();
            let description = f.get("description").and_then(Value::as_str).and_then(|s| s.lines().next()).map(ToString::to_string);
            Some(DeclaredTool { name, description })
        })
        .collect()
}

fn usage_of(a: &Attrs) -> Tokens {
    Tokens {
        prompt: uint(a.get("gen_ai.usage.input_tokens")).or_else(|| uint(a.get("gen_ai.usage.prompt_tokens"))),
        completion: uint(a.get("gen_ai.usage.output_tokens")).or_else(|| uint(a.get("gen_ai.usage.completion_tokens"))),
        reasoning: None,
        cached: uint(a.get("gen_ai.usage.cache_read.input_tokens")),
    }
}

/// Finish reasons that mean the output was cut by the token limit, across providers.
fn is_length(reason: &str) -> bool {
    matches!(reason, "length" | "max_tokens" | "max_output_tokens" | "MAX_TOKENS")
}

/// The message of a failed span: its status message, else the `exception` event's.
fn error_message(s: &Span) -> Option<String> {
    s.status_message.clone().or_else(|| {
        s.events.iter().find(|(n, _)| n == "exception").and_then(|(_, a)| str_attr(a, "exception.message").map(ToString::to_string))
    })
}

fn unknown_tool_message(msg: &str) -> bool {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(r"(?i)(unknown tool|tool \S+ (was )?not found|no such tool|not a valid tool|is not registered|tool not found)")
            .expect("static regex")
    })
    .is_match(msg)
}

/// How an agent span's error reads: a step or turn limit, the context window, a time limit,
/// something outside the agent, or the framework itself.
#[must_use]
pub fn termination_for_error(error_type: Option<&str>, message: Option<&str>) -> Termination {
    let text = format!("{} {}", error_type.unwrap_or_default(), message.unwrap_or_default());
    let re = |p: &str| regex::Regex::new(p).map(|r| r.is_match(&text)).unwrap_or(false);
    let mut t = if re(r"(?i)(max_?turns|max(imum)? (number of )?turns|recursion ?limit|max_?iterations|iteration limit|max(imum)? steps)") {
        Termination::budget(Budget::Steps, Enforcer::Harness)
    } else if re(r"(?i)(context[_ ]?(length|window)|ContextWindow|too many tokens)") {
        Termination::budget(Budget::Context, Enforcer::Provider)
    } else if re(r"(?i)(rate ?limit|\b429\b|\b5\d\d\b|overloaded|unavailable|connection|APIError|APIConnection)") {
        Termination::of(TerminationKind::Infrastructure)
    } else if re(r"(?i)(timeout|timed out|deadline)") {
        Termination::budget(Budget::WallTime, Enforcer::Harness)
    } else {
        Termination::of(TerminationKind::HarnessError)
    };
    t.raw = error_type.or(message).map(|s| s.chars().take(200).collect());
    t.detail = message.map(|m| m.chars().take(300).collect());
    t
}

/// Builds one trajectory from the spans of one trace.
struct Builder<'a> {
    spans: &'a [Span],
    by_id: BTreeMap<&'a str, usize>,
    steps: Vec<Step>,
    /// Calls without a result yet: id, name, where.
    pending: Vec<(Option<String>, String, CallRef)>,
    answered: BTreeSet<String>,
    declared: Vec<DeclaredTool>,
    declared_names: BTreeSet<String>,
    tokens: Tokens,
    model_calls: u64,
    model: Option<String>,
    last_finish: Option<String>,
    rebuilt_calls: usize,
    uncaptured_turns: usize,
}

fn add(slot: &mut Option<u64>, v: Option<u64>) {
    if let Some(v) = v {
        *slot = Some(slot.unwrap_or(0) + v);
    }
}

impl<'a> Builder<'a> {
    fn new(spans: &'a [Span]) -> Self {
        let by_id = spans.iter().enumerate().map(|(i, s)| (s.id.as_str(), i)).collect();
        Self {
            spans,
            by_id,
            steps: Vec::new(),
            pending: Vec::new(),
            answered: BTreeSet::new(),
            declared: Vec::new(),
            declared_names: BTreeSet::new(),
            tokens: Tokens::default(),
            model_calls: 0,
            model: None,
            last_finish: None,
            rebuilt_calls: 0,
            uncaptured_turns: 0,
        }
    }

    /// The `invoke_agent` spans above `s`, nearest first.
    fn agents_above(&self, s: &Span) -> Vec<&'a Span> {
        let mut out = Vec::new();
        let mut cur = s.parent.as_deref();
        let mut guard = 0;
        while let Some(p) = cur.and_then(|p| self.by_id.get(p)).map(|&i| &self.spans[i]) {
            if operation(p) == Some("invoke_agent") {
                out.push(p);
            }
            cur = p.parent.as_deref();
            guard += 1;
            if guard > 1000 {
                break;
            }
        }
        out
    }

    /// The sub-agent a span acts for: `None` for the top agent.
    fn agent_of(&self, s: &Span) -> Option<String> {
        let above = self.agents_above(s);
        if above.len() < 2 {
            return None;
        }
        let a = above[0];
        Some(str_attr(&a.attrs, "gen_ai.agent.name").map_or_else(|| a.name.clone(), ToString::to_string))
    }

    fn declare(&mut self, v: &Value) {
        for d in declared_from(v) {
            if self.declared_names.insert(d.name.clone()) {
                self.declared.push(d);
            }
        }
    }

    fn here(&self) -> u32 {
        u32::try_from(self.steps.len()).unwrap_or(u32::MAX)
    }

    fn push_result(&mut self, id: Option<String>, name: Option<String>, mut r: ToolResult, step: Step) {
        let pos = self.pending.iter().position(|(pid, _, _)| id.is_some() && pid == &id).or_else(|| {
            name.as_ref().and_then(|n| self.pending.iter().position(|(pid, pn, _)| pn == n && (id.is_none() || pid.is_none())))
        });
        let mut id = id;
        if let Some(p) = pos {
            let (pid, _, at) = self.pending.remove(p);
            r.call = Some(at);
            // A tool span without a call id answers the call it matched by name: take its id,
            // so the next turn's replayed tool message is not counted again.
            if id.is_none() {
                id = pid;
            }
        }
        if let Some(id) = &id {
            self.answered.insert(id.clone());
        }
        r.call_id = id;
        r.name = name;
        let mut step = step;
        step.tool_results.push(r);
        self.steps.push(step);
    }

    fn model_span(&mut self, s: &Span) {
        self.model_calls += 1;
        let agent = self.agent_of(s);
        if let Some(defs) = s.attrs.get("gen_ai.tool.definitions").cloned() {
            self.declare(&defs);
        }
        if self.model.is_none() {
            self.model =
                str_attr(&s.attrs, "gen_ai.response.model").or_else(|| str_attr(&s.attrs, "gen_ai.request.model")).map(ToString::to_string);
        }
        let first_turn = !self.steps.iter().any(|x| x.role == Role::Assistant);
        if first_turn && let Some(sys) = s.attrs.get("gen_ai.system_instructions").and_then(Value::as_array) {
            let mut step = Step::new(Role::System, parts_text(sys).0);
            step.agent.clone_from(&agent);
            step.source_span = s.span;
            self.steps.push(step);
        }
        let (input, output) = model_messages(s);
        // What is new in this turn's input: everything on the first turn, then what follows
        // the last assistant message (tool results, a user's reply). Robust to histories
        // that instrumentations truncate.
        let new_from = if first_turn {
            0
        } else {
            input.iter().rposition(|m| m.get("role").and_then(Value::as_str) == Some("assistant")).map_or(0, |i| i + 1)
        };
        for m in &input[new_from.min(input.len())..] {
            self.input_message(&message(m), s, agent.as_ref());
        }
        let tokens = usage_of(&s.attrs);
        add(&mut self.tokens.prompt, tokens.prompt);
        add(&mut self.tokens.completion, tokens.completion);
        add(&mut self.tokens.cached, tokens.cached);
        let reasons: Vec<String> = s
            .attrs
            .get("gen_ai.response.finish_reasons")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(ToString::to_string).collect())
            .or_else(|| str_attr(&s.attrs, "gen_ai.response.finish_reasons").map(|r| vec![r.to_string()]))
            .unwrap_or_default();
        let out = output.first().map(message);
        let mut step = match &out {
            Some(m) => {
                let mut step = Step::new(Role::Assistant, m.text.clone());
                step.reasoning = m.reasoning.clone().map(|r| Reasoning { text: Some(r), tokens: None });
                let here = self.here();
                for (i, (id, name, args)) in m.calls.iter().enumerate() {
                    step.tool_calls.push(tool_call(id.clone(), name, args));
                    self.pending.push((id.clone(), name.clone(), CallRef { step: here, call: u32::try_from(i).unwrap_or(u32::MAX) }));
                }
                step
            }
            None => {
                self.uncaptured_turns += 1;
                Step::new(Role::Assistant, String::new())
            }
        };
        self.last_finish = out.as_ref().and_then(|m| m.finish_reason.clone()).or_else(|| reasons.first().cloned());
        step.agent = agent;
        step.tokens = (tokens != Tokens::default()).then_some(tokens);
        step.timestamp = s.end.or(s.start).and_then(iso);
        step.source_span = s.span;
        if s.error {
            let kind = str_attr(&s.attrs, "error.type").unwrap_or("error");
            let msg = error_message(s).unwrap_or_default();
            step.format_error = None;
            let mut env = Step::new(Role::Environment, format!("model call failed: {kind}: {msg}").trim_end_matches(": ").to_string());
            env.agent.clone_from(&step.agent);
            env.source_span = s.span;
            env.timestamp.clone_from(&step.timestamp);
            if out.is_none() {
                self.uncaptured_turns -= 1;
                self.steps.push(env);
                return;
            }
            self.steps.push(step);
            self.steps.push(env);
            return;
        }
        self.steps.push(step);
    }

    fn input_message(&mut self, m: &Message, s: &Span, agent: Option<&String>) {
        let ts = s.start.and_then(iso);
        if !m.responses.is_empty() {
            for (id, out) in &m.responses {
                if id.as_ref().is_some_and(|i| self.answered.contains(i)) {
                    continue;
                }
                let mut step = Step::new(Role::Tool, String::new());
                step.agent = agent.cloned();
                step.source_span = s.span;
                step.timestamp.clone_from(&ts);
                let name = id.as_ref().and_then(|i| self.pending.iter().find(|(p, _, _)| p.as_ref() == Some(i))).map(|(_, n, _)| n.clone());
                self.push_result(id.clone(), name, ToolResult::new(out.clone()), step);
            }
            return;
        }
        let role = match m.role.as_str() {
            "system" | "developer" => Role::System,
            "assistant" => Role::Assistant,
            "tool" => Role::Tool,
            _ => Role::User,
        };
        let mut step = Step::new(role, m.text.clone());
        step.reasoning = m.reasoning.clone().map(|r| Reasoning { text: Some(r), tokens: None });
        step.agent = agent.cloned();
        step.source_span = s.span;
        step.timestamp = ts;
        let here = self.here();
        for (i, (id, name, args)) in m.calls.iter().enumerate() {
            step.tool_calls.push(tool_call(id.clone(), name, args));
            self.pending.push((id.clone(), name.clone(), CallRef { step: here, call: u32::try_from(i).unwrap_or(u32::MAX) }));
        }
        self.steps.push(step);
    }

    fn tool_span(&mut self, s: &Span) {
        let agent = self.agent_of(s);
        let name = str_attr(&s.attrs, "gen_ai.tool.name")
            .map(ToString::to_string)
            .or_else(|| s.name.strip_prefix("execute_tool ").map(|n| n.trim().to_string()))
            .unwrap_or_else(|| s.name.clone());
        let id = str_attr(&s.attrs, "gen_ai.tool.call.id").map(ToString::to_string);
        let known = self.pending.iter().any(|(pid, pn, _)| (id.is_some() && pid == &id) || (pid.is_none() || id.is_none()) && pn == &name);
        if !known {
            // Content capture was off (or the tool ran outside a model turn): the call is
            // rebuilt from the span onto the model turn it followed.
            let args = s.attrs.get("gen_ai.tool.call.arguments").cloned().unwrap_or(Value::Null);
            let call = tool_call(id.clone(), &name, &args);
            let target = self.steps.iter().rposition(|x| x.role == Role::Assistant && x.agent == agent && x.tool_results.is_empty());
            let at = match target {
                Some(ix) => {
                    self.steps[ix].tool_calls.push(call);
                    CallRef {
                        step: u32::try_from(ix).unwrap_or(u32::MAX),
                        call: u32::try_from(self.steps[ix].tool_calls.len() - 1).unwrap_or(u32::MAX),
                    }
                }
                None => {
                    let mut step = Step::new(Role::Assistant, String::new());
                    step.agent.clone_from(&agent);
                    step.source_span = s.span;
                    step.timestamp = s.start.and_then(iso);
                    step.tool_calls.push(call);
                    let here = self.here();
                    self.steps.push(step);
                    CallRef { step: here, call: 0 }
                }
            };
            self.pending.push((id.clone(), name.clone(), at));
            self.rebuilt_calls += 1;
        }
        let result = s.attrs.get("gen_ai.tool.call.result").map(text_of).unwrap_or_default();
        let mut r = ToolResult::new(result);
        if s.error || s.attrs.contains_key("error.type") {
            r.is_error = true;
            let msg = error_message(s).or_else(|| str_attr(&s.attrs, "error.type").map(ToString::to_string)).unwrap_or_default();
            if !msg.is_empty() && !r.output.contains(&msg) {
                if !r.output.is_empty() {
                    r.output.push('\n');
                }
                r.output.push_str(&msg);
            }
            let undeclared = !self.declared_names.is_empty() && !self.declared_names.contains(&name);
            if unknown_tool_message(&msg) || (undeclared && str_attr(&s.attrs, "error.type").is_some_and(unknown_tool_message)) {
                r.unknown_tool = Some(msg.lines().next().unwrap_or_default().to_string());
            }
        }
        let mut step = Step::new(Role::Tool, String::new());
        step.agent = agent;
        step.source_span = s.span;
        step.timestamp = s.end.or(s.start).and_then(iso);
        self.push_result(id, Some(name), r, step);
    }
}

/// One trace into a record; `None` when it holds no GenAI span.
fn trace_record(trace: &str, mut spans: Vec<Span>, file: &crate::model::SourceFile) -> Option<Trajectory> {
    spans.sort_by_key(|s| (s.start.unwrap_or(i128::MAX), s.seq));
    let ops: Vec<Option<&str>> = spans.iter().map(operation).collect();
    if ops.iter().all(Option::is_none) {
        return None;
    }
    let mut b = Builder::new(&spans);
    // Definitions on the agent span apply before its first turn.
    for s in &spans {
        if operation(s) == Some("invoke_agent")
            && let Some(defs) = s.attrs.get("gen_ai.tool.definitions").cloned()
        {
            b.declare(&defs);
        }
    }
    for s in &spans {
        match operation(s) {
            Some(op) if is_model_call(op) => b.model_span(s),
            Some("execute_tool") => b.tool_span(s),
            _ => {}
        }
    }
    let root_agent = spans.iter().find(|s| operation(s) == Some("invoke_agent") && b.agents_above(s).is_empty());
    let root = root_agent.or_else(|| spans.iter().find(|s| s.parent.as_ref().is_none_or(|p| !b.by_id.contains_key(p.as_str()))));
    let harness = root_agent
        .and_then(|a| str_attr(&a.attrs, "gen_ai.agent.name"))
        .map(ToString::to_string)
        .or_else(|| spans.iter().find_map(|s| s.service.clone()))
        .unwrap_or_else(|| "otel".to_string());
    let conversation = spans.iter().find_map(|s| str_attr(&s.attrs, "gen_ai.conversation.id")).map(ToString::to_string);
    let mut t =
        crate::model::Trajectory::new(conversation.clone().unwrap_or_else(|| trace.to_string()), harness, ADAPTER, 1, vec![file.clone()]);
    t.session_id = Some(trace.to_string());
    t.provenance.format_version = Some("otel-genai".into());
    t.model = b.model.clone().or_else(|| root.and_then(|r| str_attr(&r.attrs, "gen_ai.request.model")).map(ToString::to_string));
    if let Some(c) = &conversation {
        t.notes.push(format!("trace {trace}, conversation {c}"));
    }
    // `gen_ai.provider.name` since v1.37, `gen_ai.system` before.
    let provider = spans.iter().find_map(|s| str_attr(&s.attrs, "gen_ai.provider.name").or_else(|| str_attr(&s.attrs, "gen_ai.system")));
    if let Some(p) = provider {
        t.notes.push(format!("provider: {p}"));
    }
    let (start, end) = match root {
        Some(r) if r.start.is_some() && r.end.is_some() => (r.start, r.end),
        _ => (spans.iter().filter_map(|s| s.start).min(), spans.iter().filter_map(|s| s.end).max()),
    };
    t.started_at = start.and_then(iso);
    t.ended_at = end.and_then(iso);
    if let (Some(a), Some(z)) = (start, end) {
        #[expect(clippy::cast_precision_loss, reason = "durations in nanoseconds fit f64 to well under a microsecond")]
        let secs = (z - a) as f64 / 1e9;
        t.usage.wall_seconds = Some(secs);
    }
    let mut tok = b.tokens.clone();
    if (b.model_calls == 0 || (tok.prompt.is_none() && tok.completion.is_none()))
        && let Some(r) = root
    {
        tok = usage_of(&r.attrs);
    }
    t.usage.prompt_tokens = tok.prompt;
    t.usage.completion_tokens = tok.completion;
    t.usage.cached_tokens = tok.cached;
    t.usage.api_calls = (b.model_calls > 0).then_some(b.model_calls);
    if b.rebuilt_calls > 0 {
        t.notes.push(format!("{} tool call(s) rebuilt from execute_tool spans (the model's output was not captured)", b.rebuilt_calls));
    }
    if b.uncaptured_turns > 0 {
        t.notes.push(format!("{} model turn(s) without captured content (gen_ai content capture is opt-in)", b.uncaptured_turns));
    }
    t.notes.push(
        "OpenTelemetry spans carry no verdict: outcome comes from a verdict file keyed by trace id (session_id) or conversation id".into(),
    );
    if !b.declared.is_empty() {
        t.declared_tools = Some(std::mem::take(&mut b.declared));
    }
    let last_finish = b.last_finish.clone();
    t.steps = std::mem::take(&mut b.steps);
    t.termination = termination(&t, root, last_finish.as_deref());
    Some(t)
}

fn termination(t: &Trajectory, root: Option<&Span>, last_finish: Option<&str>) -> Termination {
    if let Some(r) = root.filter(|r| r.error || r.attrs.contains_key("error.type")) {
        let mut term = termination_for_error(str_attr(&r.attrs, "error.type"), error_message(r).as_deref());
        term.source = Some(format!("span `{}` status", r.name));
        return term;
    }
    if let Some(f) = last_finish.filter(|f| is_length(f)) {
        return Termination::budget(Budget::OutputTokens, Enforcer::Provider)
            .with_raw(format!("finish_reason={f}"), "gen_ai.response.finish_reasons");
    }
    let last = t.steps.iter().rev().find(|s| s.role == Role::Assistant && s.agent.is_none());
    let finish_offered = t.declared_tools.iter().flatten().any(|d| is_finish_tool(&d.name));
    let raw = last_finish.map(|f| format!("finish_reason={f}"));
    let mut term = match last {
        Some(x) if x.tool_calls.iter().any(|c| is_finish_tool(&c.name)) => {
            let name = x.tool_calls.iter().find(|c| is_finish_tool(&c.name)).map(|c| c.name.clone()).unwrap_or_default();
            Termination { raw: Some(format!("tool:{name}")), ..Termination::of(TerminationKind::AgentFinished) }
        }
        Some(x) if x.tool_calls.is_empty() && !x.text.is_empty() && finish_offered => {
            Termination::of(TerminationKind::AgentStoppedWithoutFinish)
        }
        Some(x) if x.tool_calls.is_empty() && !x.text.is_empty() => Termination {
            detail: Some("the final reply is the answer: no finish tool was declared".into()),
            ..Termination::of(TerminationKind::AgentFinished)
        },
        _ => return Termination::unknown(),
    };
    if term.raw.is_none() {
        term.raw = raw;
    }
    term.source = Some("last model turn".into());
    term
}

fn span_shape(j: &JsonShape, prefix: &str) -> Option<bool> {
    let k = |s: &str| format!("{prefix}{s}");
    let span =
        (j.has(&k("traceId")) && j.has(&k("spanId"))) || j.has(&k("context.trace_id")) || (j.has(&k("trace_id")) && j.has(&k("span_id")));
    if !span {
        return None;
    }
    let genai = j.keys.keys().any(|key| key.strip_prefix(prefix).is_some_and(|r| r.starts_with("attributes.gen_ai.")))
        || j.str(&k("name")).is_some_and(|n| ["chat", "execute_tool", "invoke_agent"].iter().any(|p| n.starts_with(p)));
    Some(genai)
}

/// OpenTelemetry GenAI spans.
pub struct OtelSpans;

impl Adapter for OtelSpans {
    fn name(&self) -> &'static str {
        ADAPTER
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "OpenTelemetry GenAI spans (OTLP JSON resourceSpans, a JSON list of spans, or JSONL), one record per trace"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let shapes = [p.json.as_ref().filter(|_| p.jsonl.is_none()), p.jsonl.as_ref()];
        for j in shapes.into_iter().flatten() {
            if !j.top_is_array && (j.has("resourceSpans") || j.has("resource_spans")) {
                return marker("OTLP resourceSpans");
            }
            let prefix = if j.top_is_array { "[]." } else { "" };
            match span_shape(j, prefix) {
                Some(true) => return marker("spans with gen_ai attributes"),
                Some(false) => return structure("spans (traceId, spanId)"),
                None => {}
            }
        }
        Err("no resourceSpans and no spans with traceId/spanId".into())
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        let src = Source::read(&unit.primary.path, &unit.primary.display)?;
        let text = src.text()?;
        let mut reader = Reader { src: &src, spans: Vec::new() };
        match serde_json::from_str::<&RawValue>(text) {
            Ok(doc) => reader
                .push_value(doc, &mut out.diagnostics)
                .map_err(|e| InputError::from_json(&src.display, &src.bytes, "OpenTelemetry export", &e))?,
            Err(e) if !looks_like_jsonl(text) => return Err(InputError::from_json(&src.display, &src.bytes, "OpenTelemetry export", &e)),
            Err(_) => {
                let mut start = 0usize;
                for (i, line) in text.split_inclusive('\n').enumerate() {
                    let line_start = start;
                    start += line.len();
                    let body = line.trim_end_matches(['\n', '\r']);
                    if body.trim().is_empty() {
                        continue;
                    }
                    let res = serde_json::from_str::<&RawValue>(body).and_then(|raw| reader.push_value(raw, &mut out.diagnostics));
                    if let Err(e) = res {
                        let mut d = InputError::from_json_at(&src.display, body.as_bytes(), 0, "OpenTelemetry span line", &e)
                            .on_line(i + 1, line_start);
                        d.message = format!("{} (line {})", d.message, i + 1);
                        out.diagnostics.push(d);
                    }
                }
            }
        }
        let total = reader.spans.len();
        let mut traces: BTreeMap<String, Vec<Span>> = BTreeMap::new();
        for s in reader.spans {
            traces.entry(s.trace.clone()).or_default().push(s);
        }
        // Traces in order of their first span, so records follow the file's time line.
        let mut ordered: Vec<(Option<i128>, String, Vec<Span>)> =
            traces.into_iter().map(|(id, spans)| (spans.iter().filter_map(|s| s.start).min(), id, spans)).collect();
        ordered.sort_by(|a, b| (a.0.unwrap_or(i128::MAX), &a.1).cmp(&(b.0.unwrap_or(i128::MAX), &b.1)));
        let file = src.provenance("transcript");
        for (_, id, spans) in ordered {
            if let Some(t) = trace_record(&id, spans, &file) {
                out.emit(t);
            }
        }
        if out.emitted == 0 && out.diagnostics.is_empty() {
            return Err(InputError::new(InputErrorKind::Schema, &src.display, format!("find a GenAI span among {total} span(s)"))
                .with_help(
                    "records are built from spans with gen_ai.operation.name (invoke_agent, chat, execute_tool); this trace has none",
                ));
        }
        if out.emitted == 0 && !out.diagnostics.is_empty() && total == 0 {
            return Err(InputError::new(InputErrorKind::Schema, &src.display, "read any span: every line was bad")
                .with_help("each line must be one span or one OTLP export request (resourceSpans)"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_values_become_plain_json() {
        let v: Value = serde_json::json!([
            {"key": "a", "value": {"stringValue": "x"}},
            {"key": "n", "value": {"intValue": "42"}},
            {"key": "l", "value": {"arrayValue": {"values": [{"stringValue": "stop"}]}}},
            {"key": "gen_ai.tool.call.arguments", "value": {"stringValue": "{\"q\": 1}"}}
        ]);
        let a = attrs_of(Some(&v));
        assert_eq!(a["a"], "x");
        assert_eq!(a["n"], 42);
        assert_eq!(a["l"], serde_json::json!(["stop"]));
        assert_eq!(a["gen_ai.tool.call.arguments"]["q"], 1);
    }

    #[test]
    fn indexed_legacy_attributes_become_messages() {
        let mut a = Attrs::new();
        a.insert("gen_ai.completion.0.role".into(), "assistant".into());
        a.insert("gen_ai.completion.0.tool_calls.0.name".into(), "search".into());
        a.insert("gen_ai.completion.0.tool_calls.0.arguments".into(), "{\"q\": \"x\"}".into());
        let m = indexed_messages(&a, "gen_ai.completion");
        let msg = message(&m[0]);
        assert_eq!(msg.calls.len(), 1);
        assert_eq!(msg.calls[0].1, "search");
    }

    fn spans(v: &Value) -> Vec<Span> {
        v.as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, s)| span_from(serde_json::from_value(s.clone()).unwrap(), None, None, i).unwrap())
            .collect()
    }

    #[test]
    fn a_tool_span_without_call_id_answers_once() {
        let user = serde_json::json!({"role": "user", "parts": [{"type": "text", "content": "go"}]});
        let call = serde_json::json!({"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "ls", "arguments": {}}]});
        let reply = serde_json::json!({"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "a b"}]});
        let done = serde_json::json!({"role": "assistant", "parts": [{"type": "text", "content": "done"}]});
        let chat = |id: &str, t: &str, input: Value, output: Value| {
            serde_json::json!({"traceId": "t", "spanId": id, "name": "chat m", "startTimeUnixNano": t, "attributes": {
                "gen_ai.operation.name": "chat", "gen_ai.input.messages": input.to_string(), "gen_ai.output.messages": output.to_string()}})
        };
        let v = serde_json::json!([
            chat("1", "1", serde_json::json!([user]), serde_json::json!([call])),
            {"traceId": "t", "spanId": "2", "name": "execute_tool ls", "startTimeUnixNano": "2",
             "attributes": {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "ls", "gen_ai.tool.call.result": "a b"}},
            chat("3", "3", serde_json::json!([user, call, reply]), serde_json::json!([done])),
        ]);
        let file = crate::model::SourceFile { path: "f".into(), sha256: String::new(), role: "transcript".into() };
        let t = trace_record("t", spans(&v), &file).unwrap();
        let results: Vec<&ToolResult> = t.steps.iter().flat_map(|s| &s.tool_results).collect();
        assert_eq!(results.len(), 1, "{:?}", t.steps);
        assert_eq!(results[0].call_id.as_deref(), Some("c1"));
        assert_eq!(results[0].call, Some(CallRef { step: 1, call: 0 }));
        assert_eq!(t.termination.kind, TerminationKind::AgentFinished);
    }

    #[test]
    fn agent_errors_name_the_budget() {
        assert_eq!(termination_for_error(Some("MaxTurnsExceeded"), Some("Max turns (10) exceeded")).budget, Some(Budget::Steps));
        assert_eq!(termination_for_error(Some("RateLimitError"), None).kind, TerminationKind::Infrastructure);
        assert_eq!(termination_for_error(Some("ValueError"), Some("bad")).kind, TerminationKind::HarnessError);
    }
}
