//! Headless runs: `gemini -p ... --output-format json` (`JsonOutput`: `{session_id?, response?,
//! stats?, error?, warnings?}`), or the plain text of a headless run (read only with `--format`).
//!
//! An error is `{type, message, code?}`: `type` is the error's class (`getErrorType`:
//! `FatalTurnLimitedError`, `FatalAuthenticationError`, ...), `code` the process exit code or
//! the provider's HTTP status. Plain text keeps the response on stdout and, when stderr was kept
//! with it, the CLI's `Error executing tool NAME: MESSAGE` lines and its closing message.

use serde::Deserialize;
use serde_json::Value;

use super::{HARNESS, file_stem};
use crate::ingest::adapters::shared::build::{StepBuilder, to_u32};
use crate::ingest::adapters::shared::common::uint;
use crate::ingest::diag::InputError;
use crate::ingest::format::{Adapter, Ctx, FileRole, Output, Sniff, Unit, marker};
use crate::ingest::probe::Probe;
use crate::ingest::source::Source;
use crate::model::{CallRef, Role, SourceSpan, Step, ToolCall, ToolResult, Trajectory};

const HEADLESS: &str = "gemini-cli-headless";

/// Gemini CLI headless output.
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

/// The error a headless run ended with (`JsonError`), in JSON output and the stream's result.
#[derive(Deserialize, Default)]
pub(super) struct RawJsonError {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    message: String,
    #[serde(default)]
    code: Value,
}

impl RawJsonError {
    /// Records the error read at `at` (`error`, `result.error`): its type and code as statuses,
    /// the type first (it names the failure; the code may be an exit code), its message as the
    /// error that ended the run.
    pub(super) fn signal(&self, t: &mut Trajectory, at: &str, span: Option<SourceSpan>) {
        if !self.kind.is_empty() {
            t.signals.status(format!("{at}.type"), &self.kind).with_span(span);
        }
        let code = match &self.code {
            Value::Number(n) => Some(n.to_string()),
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            _ => None,
        };
        if let Some(c) = code {
            t.signals.status(format!("{at}.code"), c).with_span(span);
        }
        t.signals.error(format!("{at}.message"), &self.message).with_span(span);
    }
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

    fn versions(&self) -> &'static str {
        "--output-format json; plain text"
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
    let mut t = Trajectory::new(task, HARNESS, HEADLESS, 1, vec![src.provenance("transcript")]);
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
    if let Some(e) = &h.error {
        e.signal(&mut t, "error", src.span_of(0, &e.message));
    }
    t
}

/// `stats` is `SessionMetrics`: per-model API and token counts, per-tool call counts.
fn read_stats(t: &mut Trajectory, stats: &Value) {
    let mut any = false;
    let (mut p, mut c, mut r, mut k, mut total, mut calls) = (0u64, 0u64, 0u64, 0u64, 0u64, 0u64);
    for (name, m) in stats.get("models").and_then(Value::as_object).into_iter().flatten() {
        any = true;
        if t.model.is_none() {
            t.model = Some(name.clone());
        }
        p = p.saturating_add(uint(m.pointer("/tokens/prompt")).unwrap_or(0));
        c = c.saturating_add(uint(m.pointer("/tokens/candidates")).unwrap_or(0));
        r = r.saturating_add(uint(m.pointer("/tokens/thoughts")).unwrap_or(0));
        k = k.saturating_add(uint(m.pointer("/tokens/cached")).unwrap_or(0));
        total = total.saturating_add(uint(m.pointer("/tokens/total")).unwrap_or(0));
        calls = calls.saturating_add(uint(m.pointer("/api/totalRequests")).unwrap_or(0));
    }
    if any {
        t.usage.prompt_tokens = Some(p);
        t.usage.completion_tokens = Some(c);
        t.usage.reasoning_tokens = Some(r);
        t.usage.cached_tokens = Some(k);
        t.usage.api_calls = Some(calls);
        #[expect(clippy::cast_precision_loss, reason = "tokens of one run")]
        {
            t.signals.consumed.tokens = (total > 0).then_some(total as f64);
        }
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

/// Plain text: the response on stdout, and (when stderr was kept with it) the CLI's
/// `Error executing tool NAME: MESSAGE` lines. The last line is where the CLI says why it
/// stopped when it did not end with the model's answer (the session-turn limit, an error).
fn headless_text(src: &Source, text: &str) -> Trajectory {
    static TOOL_ERR: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = TOOL_ERR.get_or_init(|| regex::Regex::new(r"(?m)^Error executing tool ([^:\s]+): (.*)$").expect("static regex"));
    let mut t = Trajectory::new(file_stem(&src.path), HARNESS, HEADLESS, 1, vec![src.provenance("transcript")]);
    t.provenance.format_version = Some("gemini-cli headless text".into());
    let mut b = StepBuilder::new();
    let mut response = String::new();
    let mut rest = text;
    let mut offset = 0usize;
    while let Some(c) = re.captures(rest) {
        let (Some(whole), Some(name), Some(msg)) = (c.get(0), c.get(1), c.get(2)) else { break };
        response.push_str(&rest[..whole.start()]);
        let mut call = Step::new(Role::Assistant, String::new());
        call.tool_calls.push(ToolCall { id: None, name: name.as_str().to_string(), arguments: Value::Null, raw_arguments: None });
        let span = Some(src.span(0, offset + whole.start(), whole.len()));
        let at = b.push(call, span, None);
        let mut r = ToolResult::new(msg.as_str().to_string());
        r.is_error = true;
        r.name = Some(name.as_str().to_string());
        r.call = Some(CallRef { step: to_u32(at), call: 0 });
        let mut s = Step::new(Role::Tool, String::new());
        s.tool_results.push(r);
        b.push(s, span, None);
        offset += whole.end();
        rest = &rest[whole.end()..];
    }
    response.push_str(rest);
    if !b.is_empty() {
        b.note("tool calls are known only from the CLI's error lines; successful calls leave no trace in text output");
    }
    let reply = response.trim();
    if !reply.is_empty() {
        b.push(Step::new(Role::Assistant, reply.to_string()), src.span_of(0, reply), None);
    }
    b.finish(&mut t);
    if let Some(last) = text.lines().map(str::trim).rfind(|l| !l.is_empty()) {
        t.signals.log_line("stdout+stderr (last line)", last).with_span(src.span_of(0, last));
    }
    t
}
