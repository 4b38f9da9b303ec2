//! Streamed bodies: a response sent as server-sent events, put back together into the body a
//! non-streamed call would have returned.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::ingest::adapters::chat::gemini;

/// Rebuilds a response from its streamed chunks (OpenAI `chat.completion.chunk` deltas,
/// Anthropic `message_start` / `content_block_*` / `message_delta` events, or Gemini
/// `GenerateContentResponse` chunks).
pub fn assemble_sse(text: &str) -> Option<Value> {
    let events: Vec<Value> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .filter(|d| *d != "[DONE]")
        .filter_map(|d| serde_json::from_str(d).ok())
        .collect();
    if events.is_empty() {
        return None;
    }
    if events.iter().any(gemini::is_response) && !events.iter().any(|e| e.get("choices").is_some() || e.get("type").is_some()) {
        return gemini::merge_chunks(&events);
    }
    let kind = |e: &Value| e.get("type").and_then(Value::as_str).unwrap_or_default().to_string();
    if events.iter().any(|e| kind(e) == "message_start") {
        let mut msg = Value::Null;
        let mut blocks: BTreeMap<u64, Value> = BTreeMap::new();
        let mut partial: BTreeMap<u64, String> = BTreeMap::new();
        for e in &events {
            let ix = e.get("index").and_then(Value::as_u64).unwrap_or(0);
            match kind(e).as_str() {
                "message_start" => msg = e.get("message").cloned().unwrap_or(Value::Null),
                "content_block_start" => {
                    blocks.insert(ix, e.get("content_block").cloned().unwrap_or(Value::Null));
                }
                "content_block_delta" => {
                    let d = e.get("delta").unwrap_or(&Value::Null);
                    let b = blocks.entry(ix).or_insert_with(|| serde_json::json!({}));
                    for (field, key) in [("text", "text"), ("thinking", "thinking"), ("signature", "signature")] {
                        if let (Some(add), Some(o)) = (d.get(key).and_then(Value::as_str), b.as_object_mut()) {
                            let cur = o.get(field).and_then(Value::as_str).unwrap_or_default().to_string();
                            o.insert(field.into(), Value::String(cur + add));
                        }
                    }
                    if let Some(p) = d.get("partial_json").and_then(Value::as_str) {
                        partial.entry(ix).or_default().push_str(p);
                    }
                }
                "message_delta" => {
                    if let (Some(o), Some(d)) = (msg.as_object_mut(), e.get("delta").and_then(Value::as_object)) {
                        for (k, v) in d {
                            o.insert(k.clone(), v.clone());
                        }
                    }
                    if let (Some(u), Some(o)) = (e.get("usage").and_then(Value::as_object), msg.as_object_mut()) {
                        let usage = o.entry("usage").or_insert_with(|| serde_json::json!({}));
                        if let Some(uo) = usage.as_object_mut() {
                            for (k, v) in u {
                                uo.insert(k.clone(), v.clone());
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        for (ix, json) in partial {
            if let (Some(b), Ok(input)) = (blocks.get_mut(&ix).and_then(Value::as_object_mut), serde_json::from_str::<Value>(&json)) {
                b.insert("input".into(), input);
            }
        }
        if let Some(o) = msg.as_object_mut() {
            o.insert("content".into(), Value::Array(blocks.into_values().collect()));
        }
        return msg.is_object().then_some(msg);
    }
    // OpenAI chunks.
    let (mut content, mut reasoning) = (String::new(), String::new());
    let mut calls: BTreeMap<u64, (String, String, String)> = BTreeMap::new();
    let (mut finish, mut usage, mut model, mut id) = (Value::Null, Value::Null, Value::Null, Value::Null);
    for e in &events {
        if model.is_null() {
            model = e.get("model").cloned().unwrap_or(Value::Null);
            id = e.get("id").cloned().unwrap_or(Value::Null);
        }
        if let Some(u) = e.get("usage").filter(|u| u.is_object()) {
            usage = u.clone();
        }
        let Some(c) = e.pointer("/choices/0") else { continue };
        if let Some(f) = c.get("finish_reason").filter(|f| !f.is_null()) {
            finish = f.clone();
        }
        let d = c.get("delta").unwrap_or(&Value::Null);
        content.push_str(d.get("content").and_then(Value::as_str).unwrap_or_default());
        for k in ["reasoning_content", "reasoning"] {
            reasoning.push_str(d.get(k).and_then(Value::as_str).unwrap_or_default());
        }
        for tc in d.get("tool_calls").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default() {
            let ix = tc.get("index").and_then(Value::as_u64).unwrap_or(0);
            let entry = calls.entry(ix).or_default();
            if let Some(i) = tc.get("id").and_then(Value::as_str) {
                entry.0 = i.to_string();
            }
            entry.1.push_str(tc.pointer("/function/name").and_then(Value::as_str).unwrap_or_default());
            entry.2.push_str(tc.pointer("/function/arguments").and_then(Value::as_str).unwrap_or_default());
        }
    }
    let tool_calls: Vec<Value> = calls
        .into_values()
        .map(|(id, name, args)| serde_json::json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}}))
        .collect();
    let mut message = serde_json::json!({"role": "assistant", "content": content});
    if !reasoning.is_empty() {
        message["reasoning_content"] = Value::String(reasoning);
    }
    if !tool_calls.is_empty() {
        message["tool_calls"] = Value::Array(tool_calls);
    }
    Some(
        serde_json::json!({"id": id, "object": "chat.completion", "model": model, "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::adapters::chat::{anthropic, openai};

    #[test]
    fn streamed_openai_chunks_become_one_message() {
        let sse = "data: {\"id\":\"c\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"He\"}}]}\n\n\
                   data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"t\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\"\"}}]}}]}\n\n\
                   data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"llo\",\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\":1}\"}}]},\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":4}}\n\ndata: [DONE]\n";
        let v = assemble_sse(sse).unwrap();
        let r = openai::reply(&v);
        let s = r.step.unwrap();
        assert_eq!(s.text, "Hello");
        assert_eq!(s.tool_calls[0].arguments["a"], 1);
        assert_eq!(r.finish.as_deref(), Some("tool_calls"));
        assert_eq!(r.tokens.unwrap().completion, Some(4));
    }

    #[test]
    fn streamed_anthropic_events_become_one_message() {
        let sse = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"claude\",\"content\":[],\"usage\":{\"input_tokens\":9,\"output_tokens\":1}}}\n\n\
                   event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n\
                   event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hmm\"}}\n\n\
                   event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"tu\",\"name\":\"f\",\"input\":{}}}\n\n\
                   event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"x\\\": 2}\"}}\n\n\
                   event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"},\"usage\":{\"output_tokens\":7}}\n\n";
        let v = assemble_sse(sse).unwrap();
        let r = anthropic::reply(&v);
        let s = r.step.unwrap();
        assert_eq!(s.reasoning.unwrap().text.as_deref(), Some("hmm"));
        assert_eq!(s.tool_calls[0].arguments["x"], 2);
        assert_eq!(r.finish.as_deref(), Some("max_tokens"));
        assert_eq!(r.tokens.unwrap().completion, Some(7));
    }
}
