//! `gemini -p ... --output-format stream-json`: one event per line (`JsonStreamEvent` in
//! `packages/core/src/output/types.ts`): `init`, `message` (assistant text arrives as deltas),
//! `tool_use`, `tool_result` (a failed call carries `error.type`, e.g. `tool_not_registered`),
//! `error`, and a final `result` with the status, the error that ended the run, and stats.

use serde_json::Value;

use super::headless::RawJsonError;
use super::{HARNESS, file_stem, shell_exit_code};
use crate::ingest::adapters::shared::build::StepBuilder;
use crate::ingest::adapters::shared::common::{tool_call, uint};
use crate::ingest::adapters::shared::lines;
use crate::ingest::diag::InputError;
use crate::ingest::format::{Adapter, Ctx, FileRole, Output, Sniff, Unit, marker};
use crate::ingest::probe::Probe;
use crate::ingest::source::Source;
use crate::model::{Role, Step, Trajectory};

const STREAM: &str = "gemini-cli-stream";

/// Gemini CLI headless stream-json events.
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

    fn versions(&self) -> &'static str {
        "--output-format stream-json"
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
        let mut t = Trajectory::new(file_stem(&src.path), HARNESS, STREAM, 1, vec![src.provenance("transcript")]);
        t.provenance.format_version = Some("gemini-cli stream-json".into());
        let mut b = StepBuilder::new();
        // The assistant step text deltas are appended to, until a tool result or another event.
        let mut open_reply: Option<usize> = None;
        let mut saw_result = false;
        // `error` events, kept as the CLI's log when no result says how the run ended.
        let mut errors = Vec::new();
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
            let time = v.get("timestamp").and_then(Value::as_str).map(ToString::to_string);
            match v.get("type").and_then(Value::as_str).unwrap_or("") {
                "init" => {
                    t.session_id = v.get("session_id").and_then(Value::as_str).map(ToString::to_string);
                    if let Some(id) = &t.session_id {
                        t.task_id.clone_from(id);
                    }
                    t.model = v.get("model").and_then(Value::as_str).map(ToString::to_string);
                    t.started_at = time;
                }
                "message" if s("role") == "assistant" => match open_reply {
                    Some(ix) => b.steps[ix].text.push_str(&s("content")),
                    None => open_reply = Some(b.push(Step::new(Role::Assistant, s("content")), span, time)),
                },
                "message" => {
                    open_reply = None;
                    b.push(Step::new(Role::User, s("content")), span, None);
                }
                "tool_use" => {
                    let ix = open_reply.unwrap_or_else(|| b.push(Step::new(Role::Assistant, String::new()), span, None));
                    let id = v.get("tool_id").and_then(Value::as_str).map(ToString::to_string);
                    b.add_call(ix, tool_call(id, s("tool_name"), v.get("parameters").unwrap_or(&Value::Null)));
                    open_reply = Some(ix);
                }
                "tool_result" => {
                    open_reply = None;
                    let err_msg = v.pointer("/error/message").and_then(Value::as_str).unwrap_or("");
                    let output = v.get("output").and_then(Value::as_str).unwrap_or(err_msg);
                    let mut r = b.result_for(v.get("tool_id").and_then(Value::as_str), output);
                    r.is_error = s("status") == "error";
                    r.error_type = v.pointer("/error/type").and_then(Value::as_str).map(ToString::to_string);
                    r.exit_code = shell_exit_code(&r.output);
                    let mut step = Step::new(Role::Tool, String::new());
                    step.tool_results.push(r);
                    b.push(step, span, None);
                }
                "error" => {
                    open_reply = None;
                    let ix = b.push(Step::new(Role::Environment, format!("[{}] {}", s("severity"), s("message"))), span, None);
                    if s("severity") == "error" {
                        errors.push((ix, s("message"), span));
                    }
                }
                "result" => {
                    open_reply = None;
                    saw_result = true;
                    t.ended_at = time;
                    if let Some(st) = v.get("stats") {
                        t.usage.prompt_tokens = uint(st.get("input_tokens"));
                        t.usage.completion_tokens = uint(st.get("output_tokens"));
                        t.usage.cached_tokens = uint(st.get("cached"));
                        #[expect(clippy::cast_precision_loss, reason = "milliseconds and tokens of one run")]
                        {
                            t.usage.wall_seconds = uint(st.get("duration_ms")).map(|ms| ms as f64 / 1000.0);
                            t.signals.consumed.wall_seconds = t.usage.wall_seconds;
                            t.signals.consumed.tokens = uint(st.get("total_tokens")).map(|n| n as f64);
                        }
                    }
                    // The error's type says more than the status that there was one.
                    if let Some(e) = v.get("error").filter(|e| e.is_object()) {
                        let e: RawJsonError = serde_json::from_value(e.clone()).unwrap_or_default();
                        e.signal(&mut t, "result.error", span);
                    }
                    t.signals.status("result.status", s("status")).with_span(span);
                }
                _ => {}
            }
        }
        b.finish(&mut t);
        if !saw_result {
            t.notes.push("the stream has no result event: the run was cut off".into());
            for (ix, message, span) in errors {
                t.signals.log_line("error.message", message).at_step(ix).with_span(span);
            }
        }
        out.emit(t);
        Ok(())
    }
}
