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
//!
//! Since v1.41 the conventions live in their own repository (open-telemetry/semantic-conventions-genai,
//! schema URLs `https://opentelemetry.io/schemas/gen-ai/…`; producers opt in with
//! `OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental`). A trace is read under that edition
//! when its resource or scope `schemaUrl` says so, or when it uses a name only that edition
//! defines (see [`spans::Edition`]): `plan` spans and the memory operations (`search_memory`,
//! `upsert_memory`, ...) are then read too, and `gen_ai.response.finish_reasons` comes before the
//! output message's deprecated `finish_reason`. Token counts stay `gen_ai.usage.input_tokens` /
//! `output_tokens` in both editions (`gen_ai.token.*` are metric attributes), and
//! `invoke_workflow` remains its own operation.

mod messages;
mod spans;
mod trace;

use std::collections::BTreeMap;

use serde_json::value::RawValue;

use crate::ingest::diag::{InputError, InputErrorKind};
use crate::ingest::format::{Adapter, Ctx, FileRole, Output, Sniff, Unit, marker, structure};
use crate::ingest::probe::{JsonShape, Probe};
use crate::ingest::source::Source;
use spans::{Reader, Span, looks_like_jsonl};

const ADAPTER: &str = "otel-genai";

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
        "OpenTelemetry GenAI spans (OTLP JSON resourceSpans, a JSON list of spans, or JSONL), one record per trace; the edition is read from the schema URL"
    }

    fn versions(&self) -> &'static str {
        "semconv <1.37, 1.37-1.41, gen-ai/1.42+"
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
            if let Some(t) = trace::trace_record(&id, spans, &file) {
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
