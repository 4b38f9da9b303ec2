//! Spans as the files hold them: OTLP JSON export requests (`resourceSpans`), the SDK console
//! exporter's objects, or JSON Lines of either, reduced to what a trajectory needs (ids, times,
//! attributes as plain JSON, events, the error status).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::ingest::diag::InputError;
use crate::ingest::source::Source;
use crate::model::SourceSpan;

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
    #[serde(rename = "schemaUrl", alias = "schema_url", default)]
    schema_url: Option<String>,
    #[serde(rename = "scopeSpans", alias = "scope_spans", alias = "instrumentationLibrarySpans", borrow, default)]
    scope_spans: Vec<RawScopeSpans<'a>>,
}

#[derive(Deserialize)]
struct RawResource {
    #[serde(default)]
    attributes: Option<Value>,
    /// Console exporter: the resource's schema URL.
    #[serde(rename = "schema_url", alias = "schemaUrl", default)]
    schema_url: Option<String>,
}

#[derive(Deserialize)]
struct RawScopeSpans<'a> {
    #[serde(rename = "schemaUrl", alias = "schema_url", default)]
    schema_url: Option<String>,
    #[serde(borrow, default)]
    spans: Vec<&'a RawValue>,
}

/// One span, in the OTLP JSON shape (`traceId`, `attributes: [{key, value: {stringValue}}]`,
/// `status.code`) or the SDK console exporter's (`context.trace_id`, `attributes: {k: v}`,
/// `status.status_code`, ISO times).
#[derive(Deserialize)]
pub struct RawSpan {
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

pub type Attrs = BTreeMap<String, Value>;

/// A span reduced to what a trajectory needs.
pub struct Span {
    pub trace: String,
    pub id: String,
    pub parent: Option<String>,
    pub name: String,
    pub start: Option<i128>,
    pub end: Option<i128>,
    pub attrs: Attrs,
    pub events: Vec<(String, Attrs)>,
    pub error: bool,
    /// The status code as written (`2`, `STATUS_CODE_ERROR`), when the span failed.
    pub status_code: Option<String>,
    pub status_message: Option<String>,
    pub service: Option<String>,
    /// The schema URL the span was exported under: its scope's, else its resource's.
    pub schema_url: Option<String>,
    /// The trace is read under the GenAI conventions' own repository
    /// (open-telemetry/semantic-conventions-genai): set by [`Edition::mark`].
    pub latest: bool,
    pub span: Option<SourceSpan>,
    /// Position in the file, to break ties of equal start times.
    pub seq: usize,
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
    "gen_ai.memory.records",
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
pub fn attrs_of(v: Option<&Value>) -> Attrs {
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

pub fn iso(ns: i128) -> Option<String> {
    jiff::Timestamp::from_nanosecond(ns).ok().map(|t| t.to_string())
}

pub fn str_attr<'a>(a: &'a Attrs, key: &str) -> Option<&'a str> {
    a.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

pub fn span_from(raw: RawSpan, service: Option<&str>, schema_url: Option<&str>, span: Option<SourceSpan>, seq: usize) -> Option<Span> {
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
    let status_code = code.filter(|_| error).map(|c| c.as_str().map_or_else(|| c.to_string(), ToString::to_string));
    let status_message = status
        .get("message")
        .or_else(|| status.get("description"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(ToString::to_string);
    let own_service =
        raw.resource.as_ref().map(|r| attrs_of(r.attributes.as_ref())).and_then(|a| str_attr(&a, "service.name").map(ToString::to_string));
    let own_schema = raw.resource.as_ref().and_then(|r| r.schema_url.clone()).filter(|u| !u.is_empty());
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
        status_code,
        status_message,
        service: own_service.or_else(|| service.map(ToString::to_string)),
        schema_url: own_schema.or_else(|| schema_url.filter(|u| !u.is_empty()).map(ToString::to_string)),
        latest: false,
        span,
        seq,
    })
}

/// The operation a span performs: `gen_ai.operation.name`, else the first word of its name
/// (`chat gpt-4o`, `execute_tool get_weather`; under the GenAI repository's conventions also
/// `invoke_workflow`, `plan` and the memory operations), else `chat` for pre-1.37 model spans.
pub fn operation(s: &Span) -> Option<&str> {
    if let Some(op) = str_attr(&s.attrs, "gen_ai.operation.name") {
        return Some(op);
    }
    let first = s.name.split_whitespace().next().unwrap_or_default();
    if ["chat", "text_completion", "generate_content", "execute_tool", "invoke_agent", "create_agent"].contains(&first) {
        return Some(first);
    }
    if s.latest && (first == "invoke_workflow" || first == "plan" || is_memory(first)) {
        return Some(first);
    }
    let legacy_model = s.attrs.keys().any(|k| k.starts_with("gen_ai.prompt") || k.starts_with("gen_ai.completion"))
        || (s.attrs.contains_key("gen_ai.system") && s.attrs.contains_key("gen_ai.request.model"));
    legacy_model.then_some("chat")
}

pub fn is_model_call(op: &str) -> bool {
    matches!(op, "chat" | "text_completion" | "generate_content")
}

/// The memory operations of the GenAI repository's `gen_ai.memory.client` span: store
/// lifecycle and record operations.
const MEMORY_OPERATIONS: &[&str] =
    &["create_memory_store", "delete_memory_store", "search_memory", "create_memory", "update_memory", "upsert_memory", "delete_memory"];

pub fn is_memory(op: &str) -> bool {
    MEMORY_OPERATIONS.contains(&op)
}

/// Which edition of the GenAI semantic conventions a trace was written under.
///
/// Until v1.41 they lived in open-telemetry/semantic-conventions (schema URLs
/// `https://opentelemetry.io/schemas/1.x.y`); since then in open-telemetry/semantic-conventions-genai
/// (`https://opentelemetry.io/schemas/gen-ai/x.y.z`, dev releases under `gen-ai-dev/`), whose
/// conventions producers emit when `OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental`.
/// A trace without a schema URL is read under the newer edition when it uses a name only that
/// edition defines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edition {
    /// The GenAI repository's conventions.
    pub latest: bool,
    /// What told: the schema URL's edition and version (`gen-ai/1.42.0`, `1.37.0`), or
    /// `inferred` from the names the spans use.
    pub label: Option<String>,
}

/// The edition a schema URL names: `(latest, "gen-ai/1.42.0")`, `(false, "1.37.0")`.
fn edition_of_url(url: &str) -> Option<(bool, String)> {
    let rest = url.trim_end_matches('/').split("/schemas/").nth(1)?;
    match rest.split_once('/') {
        Some((repo, version)) if repo.starts_with("gen-ai") => Some((true, format!("{repo}/{version}"))),
        Some(_) => None,
        None => Some((false, rest.to_string())),
    }
}

/// Attribute names only the GenAI repository's conventions define on spans.
const LATEST_ONLY: &[&str] = &[
    "gen_ai.usage.cache_write.input_tokens",
    "gen_ai.usage.text.input_tokens",
    "gen_ai.usage.image.input_tokens",
    "gen_ai.usage.audio.input_tokens",
    "gen_ai.usage.video.input_tokens",
    "gen_ai.usage.text.output_tokens",
    "gen_ai.usage.audio.output_tokens",
    "gen_ai.memory.store.id",
    "gen_ai.memory.record.id",
    "gen_ai.memory.record.count",
    "gen_ai.memory.query.text",
    "gen_ai.memory.records",
];

impl Edition {
    /// The edition of a trace: the first schema URL that names one, else what its names say.
    pub fn of(spans: &[Span]) -> Self {
        if let Some((latest, label)) = spans.iter().filter_map(|s| s.schema_url.as_deref()).find_map(edition_of_url) {
            return Self { latest, label: Some(label) };
        }
        let latest = spans.iter().any(|s| {
            LATEST_ONLY.iter().any(|k| s.attrs.contains_key(*k))
                || str_attr(&s.attrs, "gen_ai.operation.name").is_some_and(|op| op == "plan" || is_memory(op))
        });
        Self { latest, label: latest.then(|| "inferred".to_string()) }
    }

    /// Marks the spans to be read under this edition.
    pub fn mark(&self, spans: &mut [Span]) {
        for s in spans {
            s.latest = self.latest;
        }
    }
}

/// Reads every span of a source: spans that do not parse become diagnostics.
pub struct Reader<'a> {
    pub src: &'a Source,
    pub spans: Vec<Span>,
}

impl<'a> Reader<'a> {
    fn push_raw(&mut self, raw: &RawValue, service: Option<&str>, schema_url: Option<&str>, diags: &mut Vec<InputError>) {
        match serde_json::from_str::<RawSpan>(raw.get()) {
            Ok(r) => {
                let seq = self.spans.len();
                if let Some(s) = span_from(r, service, schema_url, self.src.span_of(0, raw.get()), seq) {
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
    pub fn push_value(&mut self, raw: &RawValue, diags: &mut Vec<InputError>) -> Result<(), serde_json::Error> {
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
                let resource_schema = rs.schema_url.as_deref().filter(|u| !u.is_empty());
                for ss in rs.scope_spans {
                    let schema = ss.schema_url.as_deref().filter(|u| !u.is_empty()).or(resource_schema);
                    for sp in ss.spans {
                        self.push_raw(sp, service, schema, diags);
                    }
                }
            }
            return Ok(());
        }
        self.push_raw(raw, None, None, diags);
        Ok(())
    }
}

/// How a span failed, after `prefix`: its `error.type` (else "error") and its message.
#[must_use]
pub fn failure(prefix: &str, s: &Span) -> String {
    let kind = str_attr(&s.attrs, "error.type").unwrap_or("error");
    let msg = error_text(s).map(|(_, m)| m).unwrap_or_default();
    format!("{prefix}{kind}: {msg}").trim_end_matches(": ").to_string()
}

/// Lines that each start a JSON object: a JSON Lines file rather than one document.
pub fn looks_like_jsonl(text: &str) -> bool {
    text.lines().filter(|l| l.starts_with('{') && l.trim_end().len() > 1).take(2).count() == 2
}
/// The message of a failed span, and where it was read: its status message, else the
/// `exception` event's.
pub fn error_text(s: &Span) -> Option<(&'static str, String)> {
    s.status_message.clone().map(|m| ("status.message", m)).or_else(|| {
        s.events
            .iter()
            .find(|(n, _)| n == "exception")
            .and_then(|(_, a)| str_attr(a, "exception.message").map(|m| ("exception.message", m.to_string())))
    })
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
    fn schema_urls_name_the_edition() {
        assert_eq!(edition_of_url("https://opentelemetry.io/schemas/gen-ai/1.42.0"), Some((true, "gen-ai/1.42.0".into())));
        assert_eq!(edition_of_url("https://opentelemetry.io/schemas/gen-ai-dev/1.43.0-dev"), Some((true, "gen-ai-dev/1.43.0-dev".into())));
        assert_eq!(edition_of_url("https://opentelemetry.io/schemas/1.37.0"), Some((false, "1.37.0".into())));
        assert_eq!(edition_of_url(""), None);
    }
}
