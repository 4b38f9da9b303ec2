//! Codex session rollouts (`~/.codex/sessions/.../rollout-*.jsonl`), and the older ones from
//! before `RolloutLine`.

use serde_json::Value;

use super::steps::Builder;
use super::{HARNESS, objects, task_id};
use crate::ingest::adapters::shared::lines::{self, Line};
use crate::ingest::diag::InputError;
use crate::ingest::format::{Adapter, Ctx, FileRole, Output, Sniff, Unit, file_name, marker, structure};
use crate::ingest::probe::Probe;
use crate::ingest::source::Source;
use crate::model::{Role, Trajectory};

const ROLLOUT_TYPES: &[&str] = &["session_meta", "response_item", "event_msg", "turn_context", "compacted"];

/// Codex session rollouts.
pub struct CodexRollout;

impl Adapter for CodexRollout {
    fn name(&self) -> &'static str {
        HARNESS
    }

    fn role(&self) -> FileRole {
        FileRole::Transcript
    }

    fn describe(&self) -> &'static str {
        "Codex CLI session rollout (JSONL: session_meta, turn_context, response_item, event_msg)"
    }

    /// Rollouts from before `RolloutLine` (no `cli_version`) and `RolloutLine` ones of CLI 0.40–0.50.
    fn versions(&self) -> &'static str {
        "legacy + RolloutLine (CLI 0.40–0.50)"
    }

    fn sniff(&self, p: &Probe) -> Sniff {
        let shape = p.jsonl.as_ref().or(p.json.as_ref().filter(|j| !j.top_is_array)).ok_or("not JSON Lines")?;
        let kind = shape.str("type").unwrap_or_default();
        if ROLLOUT_TYPES.contains(&kind) && shape.has("payload") {
            return marker(format!("rollout line (type {kind}, payload)"));
        }
        if !shape.has("type") && shape.has("id") && shape.has("timestamp") && (shape.has("instructions") || shape.has("git")) {
            return structure("pre-RolloutLine session meta (id, timestamp, instructions/git)");
        }
        if p.name.starts_with("rollout-") && p.ext() == "jsonl" && kind == "message" {
            return file_name("rollout-*.jsonl of response items");
        }
        Err("no session_meta/response_item lines".into())
    }

    fn parse(&self, unit: &Unit, _ctx: &Ctx<'_>, out: &mut Output<'_>) -> Result<(), InputError> {
        let src = Source::read(&unit.primary.path, &unit.primary.display)?;
        let mut diags = Vec::new();
        let objs = objects(&src, &mut diags, "Codex rollout line");
        let mut good: Vec<(Line<'_>, Value)> = Vec::new();
        for (line, v) in objs {
            let kind = v.get("type").and_then(Value::as_str).unwrap_or_default();
            if ROLLOUT_TYPES.contains(&kind) && !v.get("payload").is_some_and(Value::is_object) {
                diags.push(lines::schema_error(&src, &line, "a Codex rollout line", "`payload` is missing or not an object"));
                continue;
            }
            good.push((line, v));
        }
        let bad = diags.len();
        out.diagnostics.extend(diags);
        if good.is_empty() {
            return Err(lines::nothing_readable(&src, "Codex rollout line", "each line is {timestamp, type, payload}"));
        }
        let has_items = good.iter().any(|(_, v)| {
            let kind = v.get("type").and_then(Value::as_str).unwrap_or_default();
            kind == "response_item" || (!ROLLOUT_TYPES.contains(&kind) && v.get("role").is_some())
        });
        let mut b = Builder::default();
        let mut format = "codex-rollout";
        for (line, v) in &good {
            let span = Some(line.span(0));
            let ts = v.get("timestamp").and_then(Value::as_str);
            b.ts(ts);
            let kind = v.get("type").and_then(Value::as_str).unwrap_or_default();
            let payload = v.get("payload").unwrap_or(&Value::Null);
            match kind {
                "session_meta" => meta(&mut b, payload),
                "turn_context" => {
                    if let Some(m) = payload.get("model").and_then(Value::as_str) {
                        b.models.insert(m.to_string());
                        b.last_model = Some(m.to_string());
                    }
                }
                "response_item" => b.item(payload, span, ts),
                "event_msg" => b.event(payload, span, ts, false, !has_items),
                "compacted" => {
                    b.sb.note(format!("line {}: the history was compacted", line.no));
                    let text = payload.get("message").and_then(Value::as_str).unwrap_or("history compacted").to_string();
                    b.other(Role::Environment, text, span, ts);
                }
                _ if v.get("record_type").is_some() => b.sb.ignore("record_type"),
                "" if v.get("id").is_some()
                    && (v.get("instructions").is_some() || v.get("git").is_some() || v.get("timestamp").is_some()) =>
                {
                    format = "codex-rollout-legacy";
                    meta(&mut b, v);
                }
                _ => {
                    format = "codex-rollout-legacy";
                    b.item(v, span, ts);
                }
            }
        }
        let task = task_id(&unit.primary.path, b.session.as_deref());
        let mut t = Trajectory::new(task, HARNESS, self.name(), self.version(), vec![src.provenance("transcript")]);
        t.provenance.format_version = Some(format.into());
        if bad > 0 {
            t.notes.push(format!("{bad} unreadable line(s) skipped (see the diagnostics)"));
        }
        b.finish(&mut t);
        out.emit(t);
        Ok(())
    }
}

fn meta(b: &mut Builder, p: &Value) {
    let s = |k: &str| p.get(k).and_then(Value::as_str).map(ToString::to_string);
    b.session = b.session.take().or_else(|| s("id"));
    b.cwd = b.cwd.take().or_else(|| s("cwd"));
    b.version = b.version.take().or_else(|| s("cli_version"));
    if let Some(o) = s("originator") {
        b.sb.note(format!("originator: {o}"));
    }
    if let Some(m) = s("model") {
        b.models.insert(m.clone());
        b.last_model = Some(m);
    }
}
