//! Steps of a talos run: from the snapshot's `messages` (the model's text and reasoning, every
//! call with its full output) when they cover every model turn, or else from the event log
//! (tool names, arguments and each tool's summary; no text, no `finish` calls).

use serde_json::Value;

use super::store::{EventRow, sql_time};
use super::tagged;
use crate::ingest::adapters::shared::build::{StepBuilder, to_u32};
use crate::ingest::adapters::shared::common::{tool_call, uint};
use crate::model::{CallRef, Reasoning, Role, Step, Tokens, ToolResult};

/// The tokens a `ModelCall` event counts.
fn tokens(e: &EventRow) -> Tokens {
    Tokens { prompt: uint(e.payload.get("prompt_tokens")), completion: uint(e.payload.get("completion_tokens")), ..Tokens::default() }
}

/// Steps from the snapshot's `messages`, tokens from the `ModelCall` events in the same order.
pub(super) fn steps_from_messages(b: &mut StepBuilder, messages: &[&Value], calls: &[&EventRow]) {
    let mut turn = 0usize;
    for m in messages {
        let Some((role, body)) = tagged(m) else { continue };
        let blocks = body.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        match role {
            "Assistant" => {
                let mut text = Vec::new();
                let mut reasoning = Vec::new();
                let mut s = Step::new(Role::Assistant, String::new());
                for block in blocks {
                    match tagged(block) {
                        Some(("Text", v)) => text.push(v.as_str().unwrap_or("").to_string()),
                        Some(("Reasoning", v)) => reasoning.push(v.get("text").and_then(Value::as_str).unwrap_or("").to_string()),
                        Some(("ToolCall", v)) => s.tool_calls.push(tool_call(
                            v.get("id").and_then(Value::as_str).map(ToString::to_string),
                            v.get("name").and_then(Value::as_str).unwrap_or(""),
                            v.get("input").unwrap_or(&Value::Null),
                        )),
                        _ => {}
                    }
                }
                s.text = text.join("\n");
                if !reasoning.is_empty() {
                    s.reasoning = Some(Reasoning { text: Some(reasoning.join("\n")), tokens: None });
                }
                let time = calls.get(turn).and_then(|e| {
                    s.tokens = Some(tokens(e));
                    sql_time(&e.ts)
                });
                turn += 1;
                b.push(s, None, time);
            }
            "User" => {
                let mut text = Vec::new();
                let mut results = Vec::new();
                for block in blocks {
                    match tagged(block) {
                        Some(("Text", v)) => text.push(v.as_str().unwrap_or("").to_string()),
                        Some(("ToolResult", v)) => {
                            let mut r = ToolResult::new(v.get("content").and_then(Value::as_str).unwrap_or(""));
                            r.call_id = v.get("call_id").and_then(Value::as_str).map(ToString::to_string);
                            r.is_error = v.get("is_error").and_then(Value::as_bool).unwrap_or(false);
                            results.push(r);
                        }
                        _ => {}
                    }
                }
                if !results.is_empty() {
                    let mut s = Step::new(Role::Tool, String::new());
                    s.tool_results = results;
                    b.push(s, None, None);
                }
                if !text.is_empty() {
                    let role = if b.steps.iter().any(|s| s.role == Role::Assistant) { Role::Environment } else { Role::User };
                    b.push(Step::new(role, text.join("\n")), None, None);
                }
            }
            _ => {}
        }
    }
}

/// Steps from the event log alone.
pub(super) fn steps_from_events(b: &mut StepBuilder, events: &[EventRow]) {
    let mut current: Option<usize> = None;
    for e in events {
        match e.kind.as_str() {
            "ModelCall" => {
                let mut s = Step::new(Role::Assistant, String::new());
                s.tokens = Some(tokens(e));
                current = Some(b.push(s, None, sql_time(&e.ts)));
            }
            "ToolCallStarted" => {
                let at = *current.get_or_insert_with(|| b.push(Step::new(Role::Assistant, String::new()), None, None));
                let c = tool_call(
                    e.payload.get("call_id").and_then(Value::as_str).map(ToString::to_string),
                    e.payload.get("name").and_then(Value::as_str).unwrap_or(""),
                    e.payload.get("args").unwrap_or(&Value::Null),
                );
                b.add_call(at, c);
            }
            "ToolCallResult" => {
                let name = e.payload.get("name").and_then(Value::as_str).unwrap_or("").to_string();
                let mut r = ToolResult::new(e.payload.get("summary").and_then(Value::as_str).unwrap_or(""));
                r.is_error = e.payload.get("is_error").and_then(Value::as_bool).unwrap_or(false);
                // Started and Result are written around one call, so the result answers the
                // latest call of that name still open.
                if let Some(at) = current {
                    let answered: Vec<u32> = b
                        .steps
                        .iter()
                        .flat_map(|s| &s.tool_results)
                        .filter_map(|r| r.call)
                        .filter(|c| c.step as usize == at)
                        .map(|c| c.call)
                        .collect();
                    let k = b.steps[at].tool_calls.iter().enumerate().rposition(|(k, c)| c.name == name && !answered.contains(&to_u32(k)));
                    if let Some(k) = k {
                        r.call = Some(CallRef { step: to_u32(at), call: to_u32(k) });
                        r.call_id.clone_from(&b.steps[at].tool_calls[k].id);
                    }
                }
                r.name = Some(name);
                let mut s = Step::new(Role::Tool, String::new());
                s.tool_results.push(r);
                b.push(s, None, sql_time(&e.ts));
            }
            _ => {}
        }
    }
}
