//! `claude -p --output-format stream-json` output: `system/init` (the tool list, model,
//! version), the messages, and a `result` event that says how the run ended.

use serde_json::Value;

use super::HARNESS;
use super::steps::{Builder, api_error_text};
use super::tree::{Entry, read_entries};
use crate::ingest::adapters::agent_cli::task_from_path;
use crate::ingest::adapters::chat::anthropic as chat_anthropic;
use crate::ingest::adapters::chat::api as chat_api;
use crate::ingest::adapters::shared::common::content_text;
use crate::ingest::adapters::shared::lines;
use crate::ingest::diag::InputError;
use crate::ingest::format::{Adapter, Ctx, FileRole, Output, Sniff, Unit, marker, structure};
use crate::ingest::probe::Probe;
use crate::ingest::source::Source;
use crate::model::Trajectory;

/// `claude -p --output-format stream-json` output (JSON Lines, or a JSON array of the events).
pub struct ClaudeCodeStream;

impl Adapter for ClaudeCodeStream {
    fn name(&self) -> &'static str {
        "claude-code-stream"
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "Claude Code stream-json output (system/init, assistant, user, result events)"
    }

    fn versions(&self) -> &'static str {
        "stream-json (CLI 2.0)"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let (shape, pre) = match (&p.jsonl, &p.json) {
            (Some(l), _) => (l, ""),
            (None, Some(j)) if j.top_is_array => (j, "[]."),
            (None, Some(j)) => (j, ""),
            _ => return Err("not JSON".into()),
        };
        let kind = shape.str(&format!("{pre}type")).unwrap_or_default();
        let sub = shape.str(&format!("{pre}subtype")).unwrap_or_default();
        if kind == "system" && sub == "init" && (shape.has(&format!("{pre}tools")) || shape.has(&format!("{pre}session_id"))) {
            return marker("stream-json system/init event");
        }
        if matches!(kind, "system" | "assistant" | "user" | "result")
            && shape.has(&format!("{pre}session_id"))
            && !shape.has(&format!("{pre}sessionId"))
        {
            return structure(format!("stream-json {kind} event with session_id"));
        }
        Err("no stream-json system/init event".into())
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        let src = Source::read(&unit.primary.path, &unit.primary.display)?;
        let mut diags = Vec::new();
        let entries = read_entries(&src, 0, &mut diags, "Claude Code stream-json event")?;
        let bad = diags.len();
        out.diagnostics.extend(diags);
        if entries.is_empty() {
            return Err(lines::nothing_readable(&src, "stream-json event", "each line is one event: system, assistant, user or result"));
        }
        let mut t =
            Trajectory::new(task_from_path(&unit.primary.path), HARNESS, self.name(), self.version(), vec![src.provenance("transcript")]);
        t.provenance.format_version = Some("claude-code-stream-json".into());
        let mut b = Builder::default();
        let mut result: Option<&Entry> = None;
        for e in &entries {
            match (e.kind(), e.raw.subtype.as_deref()) {
                ("system", Some("init")) => {
                    if let Some(tools) = &e.raw.tools {
                        t.declared_tools = chat_api::declared_tools(&Value::Array(tools.clone()));
                    }
                    t.model = t.model.take().or_else(|| e.raw.model.clone());
                    t.harness_version = t.harness_version.take().or_else(|| e.raw.claude_code_version.clone());
                    t.session_id = t.session_id.take().or_else(|| e.raw.session_id.clone());
                    let failed: Vec<String> = e
                        .raw
                        .mcp_servers
                        .iter()
                        .flatten()
                        .filter(|s| s.get("status").and_then(Value::as_str).is_some_and(|st| st != "connected"))
                        .filter_map(|s| s.get("name").and_then(Value::as_str).map(ToString::to_string))
                        .collect();
                    if !failed.is_empty() {
                        t.notes.push(format!("MCP servers not connected at start: {}", failed.join(", ")));
                    }
                }
                ("result", _) => {
                    result = Some(e);
                    if let Some(s) = &e.raw.session_id {
                        b.session_ids.insert(s.clone());
                    }
                }
                _ => b.entry(e, None),
            }
        }
        b.settle_tokens();
        match result {
            Some(r) => result_signals(r, &mut t),
            None => t.notes.push("the stream has no result event: the run, or its capture, was cut off".into()),
        }
        b.end_signals(&mut t);
        b.finish(&mut t);
        if let Some(r) = result {
            let raw = &r.raw;
            if let Some(c) = raw.total_cost_usd {
                t.usage.cost_usd = Some(c);
            }
            if let Some(ms) = raw.duration_ms {
                t.usage.wall_seconds = Some(ms / 1000.0);
            }
            // The result's usage is the run's total; it wins over the sum of messages.
            if let Some(k) = raw.usage.as_ref().and_then(chat_anthropic::tokens) {
                t.usage.prompt_tokens = k.prompt.or(t.usage.prompt_tokens);
                t.usage.completion_tokens = k.completion.or(t.usage.completion_tokens);
                t.usage.cached_tokens = k.cached.or(t.usage.cached_tokens);
            }
        }
        if bad > 0 {
            t.notes.push(format!("{bad} unreadable event(s) skipped (see the diagnostics)"));
        }
        t.notes.push("stream-json carries no verdict: outcome comes from a verdict file keyed by the task id or session id".into());
        out.emit(t);
        Ok(())
    }
}

/// What a stream-json `result` event says about the end, as written: its subtype (or, without
/// one, its type), whether it is an error, the errors and the error text it carries, and the
/// turns and cost the run used. The subtype comes first: it is the harness's own word.
#[expect(clippy::cast_precision_loss, reason = "turn counts are far below 2^52")]
fn result_signals(r: &Entry, t: &mut Trajectory) {
    let raw = &r.raw;
    let span = Some(r.span);
    match raw.subtype.as_deref() {
        Some(sub) => t.signals.status("result.subtype", sub).with_span(span),
        None => t.signals.status("result.type", "result").with_span(span),
    };
    if let Some(e) = raw.is_error {
        t.signals.status("result.is_error", e.to_string()).with_span(span);
    }
    let errors = raw.errors.as_ref().map(content_text).unwrap_or_default();
    if !errors.trim().is_empty() {
        t.signals.error("result.errors", errors).with_span(span);
    }
    let text = raw.result.as_ref().map(content_text).unwrap_or_default();
    if raw.is_error == Some(true) && !text.trim().is_empty() {
        t.signals.error("result.result", api_error_text(&text)).with_span(span);
    }
    t.signals.consumed.steps = raw.num_turns.map(|n| n as f64);
    t.signals.consumed.cost_usd = raw.total_cost_usd;
}
