//! Messages of a model span, from whichever form the instrumentation wrote: the v1.37
//! `gen_ai.input.messages` / `gen_ai.output.messages` parts, OpenAI-style messages, the older
//! indexed `gen_ai.prompt.N.*` / `gen_ai.completion.N.*` attributes, or span events.

use std::collections::BTreeMap;

use serde_json::Value;

use super::spans::{Attrs, Span};
use crate::ingest::adapters::shared::common::{content_text, uint};
use crate::model::Tokens;

/// Text of a list of message parts (`text`, `reasoning`; other parts are named).
pub fn parts_text(parts: &[Value]) -> (String, Option<String>) {
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
pub struct Message {
    pub role: String,
    pub text: String,
    pub reasoning: Option<String>,
    pub calls: Vec<(Option<String>, String, Value)>,
    pub responses: Vec<(Option<String>, String)>,
    pub finish_reason: Option<String>,
}

pub fn message(v: &Value) -> Message {
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
    m.text = content_text(v.get("content").unwrap_or(&Value::Null));
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

pub fn text_of(v: &Value) -> String {
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
/// instrumentation used, and the field the answer was read from.
pub fn model_messages(s: &Span) -> (Vec<Value>, Vec<Value>, &'static str) {
    let list = |k: &str| s.attrs.get(k).and_then(Value::as_array).cloned();
    let mut input = list("gen_ai.input.messages").or_else(|| list("gen_ai.prompt")).unwrap_or_default();
    let (mut output, mut from) = match list("gen_ai.output.messages") {
        Some(o) => (o, "gen_ai.output.messages"),
        None => (list("gen_ai.completion").unwrap_or_default(), "gen_ai.completion"),
    };
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
            "gen_ai.content.completion" if output.is_empty() => {
                output = json("gen_ai.completion");
                from = "gen_ai.content.completion";
            }
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
                from = "gen_ai.choice";
            }
            _ => {}
        }
    }
    (input, output, from)
}

pub fn usage_of(a: &Attrs) -> Tokens {
    Tokens {
        prompt: uint(a.get("gen_ai.usage.input_tokens")).or_else(|| uint(a.get("gen_ai.usage.prompt_tokens"))),
        completion: uint(a.get("gen_ai.usage.output_tokens")).or_else(|| uint(a.get("gen_ai.usage.completion_tokens"))),
        reasoning: uint(a.get("gen_ai.usage.reasoning.output_tokens")),
        cached: uint(a.get("gen_ai.usage.cache_read.input_tokens")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
