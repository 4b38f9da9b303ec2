//! Anthropic Messages API content: requests (`system`, `messages` of content blocks, `tools`)
//! and responses (`content`, `stop_reason`, `usage`).
//!
//! Claude Code writes these same content blocks into its transcripts, so its adapter reuses the
//! block readers here: text → step text, `thinking` → reasoning, `tool_use` → calls,
//! `tool_result` → results with `is_error`. A block already on the step (same tool id, same
//! text) is not added twice, because Claude Code streams one message over several lines.

use serde_json::Value;

use crate::ingest::adapters::chat::api::{History, Reply};
use crate::ingest::adapters::shared::common::{content_text, tool_call, uint};
use crate::model::{Reasoning, Role, Step, Tokens, ToolResult};

/// Adds an assistant message's content (a string or a list of blocks) to `step`.
pub fn add_assistant_content(step: &mut Step, content: &Value) {
    let blocks = match content {
        Value::Array(b) => b.as_slice(),
        Value::String(s) => {
            add_text(step, s);
            return;
        }
        _ => return,
    };
    for b in blocks {
        let kind = b.get("type").and_then(Value::as_str).unwrap_or_default();
        match kind {
            "text" => add_text(step, b.get("text").and_then(Value::as_str).unwrap_or_default()),
            "thinking" => add_reasoning(step, b.get("thinking").and_then(Value::as_str)),
            "redacted_thinking" => add_reasoning(step, None),
            "tool_use" | "server_tool_use" | "mcp_tool_use" => {
                let id = b.get("id").and_then(Value::as_str).map(ToString::to_string);
                if id.is_some() && step.tool_calls.iter().any(|c| c.id == id) {
                    continue;
                }
                let name = b.get("name").and_then(Value::as_str).unwrap_or("unknown");
                let mut call = tool_call(id, name, b.get("input").unwrap_or(&Value::Null));
                if call.arguments.is_null() && call.raw_arguments.is_none() {
                    call.arguments = Value::Object(serde_json::Map::new());
                }
                step.tool_calls.push(call);
            }
            // Server tools answer inside the same assistant message (`web_search_tool_result`).
            k if k.ends_with("_tool_result") => {
                let id = b.get("tool_use_id").and_then(Value::as_str).map(ToString::to_string);
                if id.is_some() && step.tool_results.iter().any(|r| r.call_id == id) {
                    continue;
                }
                let content = b.get("content").unwrap_or(&Value::Null);
                let mut r = ToolResult::new(content_text(content));
                r.call_id = id;
                r.is_error = content.get("type").and_then(Value::as_str).is_some_and(|t| t.ends_with("_error"))
                    || b.get("is_error").and_then(Value::as_bool).unwrap_or(false);
                step.tool_results.push(r);
            }
            _ => {}
        }
    }
}

fn add_text(step: &mut Step, text: &str) {
    if text.is_empty() || has_segment(&step.text, text) {
        return;
    }
    if !step.text.is_empty() {
        step.text.push_str("\n\n");
    }
    step.text.push_str(text);
}

fn add_reasoning(step: &mut Step, text: Option<&str>) {
    let r = step.reasoning.get_or_insert_with(Reasoning::default);
    let Some(text) = text.filter(|t| !t.is_empty()) else { return };
    match &mut r.text {
        Some(existing) if has_segment(existing, text) => {}
        Some(existing) => {
            existing.push_str("\n\n");
            existing.push_str(text);
        }
        None => r.text = Some(text.to_string()),
    }
}

/// Whether `whole` already holds `part` as one of its `\n\n`-joined pieces at either end
/// (a block streamed twice).
fn has_segment(whole: &str, part: &str) -> bool {
    whole == part
        || whole.strip_suffix(part).is_some_and(|w| w.ends_with("\n\n"))
        || whole.strip_prefix(part).is_some_and(|w| w.starts_with("\n\n"))
}

/// What a user message holds: tool results, and everything else as text.
#[derive(Debug, Default)]
pub struct UserContent {
    pub results: Vec<ToolResult>,
    pub text: String,
}

/// Reads a user message's content: `tool_result` blocks become results (with `is_error` as the
/// block marks it), other blocks text. Whether a failed result rejects an unknown tool is for
/// interpretation to say.
#[must_use]
pub fn user_content(content: &Value) -> UserContent {
    let mut out = UserContent::default();
    let blocks = match content {
        Value::Array(b) => b.as_slice(),
        other => {
            out.text = content_text(other);
            return out;
        }
    };
    let mut rest = Vec::new();
    for b in blocks {
        if b.get("type").and_then(Value::as_str) == Some("tool_result") {
            let output = content_text(b.get("content").unwrap_or(&Value::Null));
            let mut r = ToolResult::new(output);
            r.call_id = b.get("tool_use_id").and_then(Value::as_str).map(ToString::to_string);
            r.is_error = b.get("is_error").and_then(Value::as_bool).unwrap_or(false);
            out.results.push(r);
        } else {
            rest.push(b.clone());
        }
    }
    out.text = content_text(&Value::Array(rest));
    out
}

/// The first non-empty line, without the `<tool_use_error>` wrapper Claude Code puts around
/// rejections.
#[must_use]
pub fn first_line(text: &str) -> String {
    let t = text.trim().trim_start_matches("<tool_use_error>");
    let line = t.lines().find(|l| !l.trim().is_empty()).unwrap_or_default();
    line.trim_end_matches("</tool_use_error>").trim().to_string()
}

/// Token counts of an Anthropic `usage`: prompt counts cache writes and reads too (Anthropic's
/// `input_tokens` leaves them out), so prompt sizes compare across providers.
#[must_use]
pub fn tokens(usage: &Value) -> Option<Tokens> {
    if !usage.is_object() {
        return None;
    }
    let input = uint(usage.get("input_tokens"));
    let write = uint(usage.get("cache_creation_input_tokens")).unwrap_or(0);
    let read = uint(usage.get("cache_read_input_tokens"));
    let prompt = input.map(|i| i + write + read.unwrap_or(0));
    Some(Tokens { prompt, completion: uint(usage.get("output_tokens")), reasoning: None, cached: read.filter(|r| *r > 0) })
}

/// The conversation a request carries: `system`, then `messages`.
#[must_use]
pub fn history(req: &Value) -> History {
    let mut h = History::default();
    if let Some(sys) = req.get("system").filter(|s| !s.is_null()) {
        let text = content_text(sys);
        if !text.is_empty() {
            h.steps.push(Step::new(Role::System, text));
        }
    }
    let msgs = req.get("messages").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    for m in msgs {
        h.msg_step.push(h.steps.len());
        let content = m.get("content").unwrap_or(&Value::Null);
        match m.get("role").and_then(Value::as_str).unwrap_or_default() {
            "assistant" => {
                let mut step = Step::new(Role::Assistant, "");
                add_assistant_content(&mut step, content);
                h.steps.push(step);
            }
            _ => {
                let u = user_content(content);
                if !u.results.is_empty() {
                    let mut step = Step::new(Role::Tool, "");
                    step.tool_results = u.results;
                    h.steps.push(step);
                }
                if !u.text.is_empty() {
                    h.steps.push(Step::new(Role::User, u.text));
                }
            }
        }
    }
    h
}

/// A Messages API response body.
#[must_use]
pub fn reply(body: &Value) -> Reply {
    let mut step = Step::new(Role::Assistant, "");
    add_assistant_content(&mut step, body.get("content").unwrap_or(&Value::Null));
    let stop = body.get("stop_reason").and_then(Value::as_str).map(ToString::to_string);
    let tokens = body.get("usage").and_then(tokens);
    step.tokens.clone_from(&tokens);
    Reply {
        refusal: (stop.as_deref() == Some("refusal")).then(|| step.text.clone()),
        step: Some(step),
        finish: stop,
        tokens,
        model: body.get("model").and_then(Value::as_str).map(ToString::to_string),
        created: None,
        ..Reply::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_blocks_are_added_once() {
        let mut s = Step::new(Role::Assistant, "");
        let a = serde_json::json!([{"type": "text", "text": "hi"}, {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]);
        add_assistant_content(&mut s, &a);
        add_assistant_content(&mut s, &a);
        add_assistant_content(&mut s, &serde_json::json!([{"type": "thinking", "thinking": "hm"}]));
        assert_eq!(s.text, "hi");
        assert_eq!(s.tool_calls.len(), 1);
        assert_eq!(s.reasoning.unwrap().text.as_deref(), Some("hm"));
    }

    #[test]
    fn tool_results_keep_their_error_flag_and_text() {
        let u = user_content(&serde_json::json!([
            {"type": "tool_result", "tool_use_id": "t", "is_error": true, "content": "<tool_use_error>Error: No such tool available: Foo</tool_use_error>"},
            {"type": "text", "text": "more"}
        ]));
        let r = &u.results[0];
        assert_eq!((r.call_id.as_deref(), r.is_error), (Some("t"), true));
        assert_eq!(first_line(&r.output), "Error: No such tool available: Foo");
        assert_eq!(u.text, "more");
    }

    #[test]
    fn prompt_tokens_include_the_cache() {
        let t = tokens(
            &serde_json::json!({"input_tokens": 2, "cache_creation_input_tokens": 10, "cache_read_input_tokens": 100, "output_tokens": 5}),
        )
        .unwrap();
        assert_eq!((t.prompt, t.cached, t.completion), (Some(112), Some(100), Some(5)));
    }
}
