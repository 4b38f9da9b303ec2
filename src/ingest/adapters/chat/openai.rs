//! OpenAI Chat Completions content: requests (`messages` with roles, `tool_calls`, `tools`) and
//! responses (`choices[0].message`, `finish_reason`, `usage`).
//!
//! Arguments arrive as JSON inside a string; a `tool` message answers the call its
//! `tool_call_id` names. Reasoning text appears under `reasoning_content` (DeepSeek, vLLM) or
//! `reasoning` (OpenRouter); OpenAI itself reports only a token count.

use serde_json::Value;

use crate::ingest::adapters::chat::api::{History, Reply};
use crate::ingest::adapters::shared::common::{content_text, tool_call, uint};
use crate::model::{Reasoning, Role, Step, Tokens, ToolResult};

/// An assistant message (from a request's history or a response's choice) as a step.
#[must_use]
pub fn assistant_step(m: &Value) -> Step {
    let mut text = parts_text(m.get("content").unwrap_or(&Value::Null));
    if let Some(refusal) = m.get("refusal").and_then(Value::as_str).filter(|r| !r.is_empty())
        && text.is_empty()
    {
        text = refusal.to_string();
    }
    let mut step = Step::new(Role::Assistant, text);
    let reasoning = ["reasoning_content", "reasoning"].iter().find_map(|k| m.get(*k).and_then(Value::as_str).filter(|r| !r.is_empty()));
    step.reasoning = reasoning.map(|r| Reasoning { text: Some(r.to_string()), tokens: None });
    for c in m.get("tool_calls").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default() {
        let id = c.get("id").and_then(Value::as_str).map(ToString::to_string);
        let f = c.get("function").unwrap_or(c);
        let name = f.get("name").and_then(Value::as_str).unwrap_or("unknown");
        step.tool_calls.push(tool_call(id, name, f.get("arguments").unwrap_or(&Value::Null)));
    }
    // The function-calling API before tools: one call, no id.
    if let Some(f) = m.get("function_call").filter(|f| f.is_object()) {
        let name = f.get("name").and_then(Value::as_str).unwrap_or("unknown");
        step.tool_calls.push(tool_call(None, name, f.get("arguments").unwrap_or(&Value::Null)));
    }
    step
}

/// Text of `content`: a string, or parts where a refusal part counts as text.
fn parts_text(v: &Value) -> String {
    match v {
        Value::Array(parts) => {
            let texts: Vec<Value> = parts
                .iter()
                .map(|p| match p.get("refusal").and_then(Value::as_str) {
                    Some(r) if p.get("type").and_then(Value::as_str) == Some("refusal") => Value::String(r.to_string()),
                    _ => p.clone(),
                })
                .collect();
            content_text(&Value::Array(texts))
        }
        other => content_text(other),
    }
}

/// The conversation a request carries, one step per message; consecutive `tool` messages
/// (answers to one assistant turn) share one step.
#[must_use]
pub fn history(req: &Value) -> History {
    let mut h = History::default();
    let msgs = req.get("messages").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    for m in msgs {
        let role = m.get("role").and_then(Value::as_str).unwrap_or_default();
        let content = m.get("content").unwrap_or(&Value::Null);
        if matches!(role, "tool" | "function") {
            let mut r = ToolResult::new(parts_text(content));
            r.call_id = m.get("tool_call_id").and_then(Value::as_str).map(ToString::to_string);
            if role == "function" {
                r.name = m.get("name").and_then(Value::as_str).map(ToString::to_string);
            }
            let n = h.steps.len();
            match h.steps.last_mut() {
                Some(prev) if prev.role == Role::Tool => {
                    h.msg_step.push(n - 1);
                    prev.tool_results.push(r);
                }
                _ => {
                    h.msg_step.push(h.steps.len());
                    let mut step = Step::new(Role::Tool, "");
                    step.tool_results.push(r);
                    h.steps.push(step);
                }
            }
            continue;
        }
        h.msg_step.push(h.steps.len());
        let step = match role {
            "assistant" => assistant_step(m),
            "system" | "developer" => Step::new(Role::System, parts_text(content)),
            _ => Step::new(Role::User, parts_text(content)),
        };
        h.steps.push(step);
    }
    h
}

/// Token counts of an OpenAI `usage`.
#[must_use]
pub fn tokens(u: &Value) -> Option<Tokens> {
    if !u.is_object() {
        return None;
    }
    Some(Tokens {
        prompt: uint(u.get("prompt_tokens")),
        completion: uint(u.get("completion_tokens")),
        reasoning: uint(u.pointer("/completion_tokens_details/reasoning_tokens")).filter(|n| *n > 0),
        cached: uint(u.pointer("/prompt_tokens_details/cached_tokens")).filter(|n| *n > 0),
    })
}

/// A chat completion response body (the first choice; `n > 1` is not a trajectory).
#[must_use]
pub fn reply(body: &Value) -> Reply {
    let choice = body.pointer("/choices/0");
    let msg = choice.and_then(|c| c.get("message"));
    let mut step = msg.map(assistant_step);
    let tokens = body.get("usage").and_then(tokens);
    if let Some(s) = step.as_mut() {
        s.tokens.clone_from(&tokens);
        if let (Some(r), Some(n)) = (s.reasoning.as_mut(), tokens.as_ref().and_then(|t| t.reasoning)) {
            r.tokens = Some(n);
        } else if let Some(n) = tokens.as_ref().and_then(|t| t.reasoning) {
            s.reasoning = Some(Reasoning { text: None, tokens: Some(n) });
        }
    }
    Reply {
        step,
        finish: choice.and_then(|c| c.get("finish_reason")).and_then(Value::as_str).map(ToString::to_string),
        tokens,
        model: body.get("model").and_then(Value::as_str).map(ToString::to_string),
        refusal: msg.and_then(|m| m.get("refusal")).and_then(Value::as_str).filter(|r| !r.is_empty()).map(ToString::to_string),
        created: body.get("created").and_then(Value::as_i64),
        ..Reply::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_messages_answer_calls_and_share_a_step() {
        let req = serde_json::json!({"messages": [
            {"role": "system", "content": "s"},
            {"role": "user", "content": [{"type": "text", "text": "u"}]},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{\"x\": 1}"}},
                {"id": "b", "type": "function", "function": {"name": "g", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "a", "content": "1"},
            {"role": "tool", "tool_call_id": "b", "content": "2"}
        ]});
        let h = history(&req);
        assert_eq!(h.steps.len(), 4);
        assert_eq!(h.msg_step, [0, 1, 2, 3, 3]);
        assert_eq!(h.steps[2].tool_calls[0].arguments["x"], 1);
        assert_eq!(h.steps[3].tool_results[1].call_id.as_deref(), Some("b"));
    }
}
