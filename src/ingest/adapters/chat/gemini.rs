//! Gemini API and Vertex AI `generateContent` content: requests (`systemInstruction`,
//! `contents` of `parts`, `tools`, `generationConfig`) and responses (`candidates`,
//! `usageMetadata`, `promptFeedback`), and streamed chunks put back together.
//!
//! The REST API accepts each field in lowerCamelCase and in the proto's snake_case, and curl
//! examples, SDKs and proxies write both, so every field is read under either name. Calls carry
//! an `id` only on some versions; without one a `functionResponse` names its call by `name`,
//! and pairing falls back to name and order. A response's `finishReason` is recorded as read:
//! what `MAX_TOKENS` or `SAFETY` mean is the profile's (`rules/harnesses/chat-api.toml`).

use serde_json::{Map, Value};

use crate::ingest::adapters::chat::api::{History, Reply};
use crate::ingest::adapters::shared::common::{tool_call, uint};
use crate::model::{DeclaredTool, Reasoning, Role, Step, Tokens, ToolResult};

/// `v[camel]`, else `v[snake]`: the API takes either spelling.
fn field<'a>(v: &'a Value, camel: &str, snake: &str) -> Option<&'a Value> {
    v.get(camel).or_else(|| v.get(snake)).filter(|x| !x.is_null())
}

/// A request setting: in the REST body, or in the `config` of the SDK's own call
/// (`generate_content(model=..., contents=..., config=...)`) as SDK-level logs record it.
#[must_use]
pub fn setting<'a>(req: &'a Value, camel: &str, snake: &str) -> Option<&'a Value> {
    field(req, camel, snake).or_else(|| req.get("config").and_then(|c| field(c, camel, snake)))
}

fn parts(content: &Value) -> &[Value] {
    content.get("parts").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

/// The name a code-execution call is recorded under: the parts name no tool, and the
/// declared tool (`codeExecution`) is listed under the same name so the call is no stranger.
const CODE_EXECUTION: &str = "code_execution";

/// A media part as a placeholder: the bytes are no evidence, but that they were sent is.
fn media(p: &Value) -> Option<String> {
    if let Some(d) = field(p, "inlineData", "inline_data") {
        let mime = field(d, "mimeType", "mime_type").and_then(Value::as_str).unwrap_or("data");
        return Some(format!("[inline {mime}]"));
    }
    let f = field(p, "fileData", "file_data")?;
    let mime = field(f, "mimeType", "mime_type").and_then(Value::as_str).unwrap_or("file");
    let uri = field(f, "fileUri", "file_uri").and_then(Value::as_str).unwrap_or_default();
    Some(format!("[file {mime} {uri}]").replace(" ]", "]"))
}

fn push_text(into: &mut String, text: &str) {
    if text.is_empty() {
        return;
    }
    if !into.is_empty() {
        into.push('\n');
    }
    into.push_str(text);
}

/// A function's answer as the text a reader checks: what the SDKs wrap it in (`{"output": ...}`,
/// `{"result": ...}`), a string as is and anything else as JSON. `error` is the key the SDKs reserve
/// for a failed call.
fn function_result(fr: &Value) -> ToolResult {
    let response = fr.get("response").unwrap_or(&Value::Null);
    let single = response.as_object().filter(|o| o.len() == 1).and_then(|o| o.iter().next());
    let inner = single.filter(|(k, _)| matches!(k.as_str(), "output" | "result" | "content" | "error")).map_or(response, |(_, v)| v);
    let output = match inner {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let mut r = ToolResult::new(output);
    r.call_id = fr.get("id").and_then(Value::as_str).filter(|s| !s.is_empty()).map(ToString::to_string);
    r.name = fr.get("name").and_then(Value::as_str).map(ToString::to_string);
    r.is_error = response.get("error").is_some_and(|e| !e.is_null());
    r
}

/// A model turn (from a request's history or a response's candidate) as a step: text, thought
/// summaries as reasoning, function calls, and code the model ran with its result.
#[must_use]
fn model_step(content: &Value) -> Step {
    let mut step = Step::new(Role::Assistant, "");
    let mut thoughts = String::new();
    for p in parts(content) {
        let thought = p.get("thought").and_then(Value::as_bool).unwrap_or(false);
        if let Some(t) = p.get("text").and_then(Value::as_str) {
            push_text(if thought { &mut thoughts } else { &mut step.text }, t);
        } else if let Some(fc) = field(p, "functionCall", "function_call") {
            let id = fc.get("id").and_then(Value::as_str).filter(|s| !s.is_empty()).map(ToString::to_string);
            let name = fc.get("name").and_then(Value::as_str).unwrap_or("unknown");
            let args = fc.get("args").filter(|a| !a.is_null()).cloned().unwrap_or_else(|| Value::Object(Map::new()));
            step.tool_calls.push(tool_call(id, name, &args));
        } else if let Some(code) = field(p, "executableCode", "executable_code") {
            step.tool_calls.push(tool_call(None, CODE_EXECUTION, code));
        } else if let Some(res) = field(p, "codeExecutionResult", "code_execution_result") {
            let mut r = ToolResult::new(res.get("output").and_then(Value::as_str).unwrap_or_default());
            r.name = Some(CODE_EXECUTION.into());
            r.is_error = res.get("outcome").and_then(Value::as_str).is_some_and(|o| o != "OUTCOME_OK");
            step.tool_results.push(r);
        } else if let Some(m) = media(p) {
            push_text(&mut step.text, &m);
        }
    }
    if !thoughts.is_empty() {
        step.reasoning = Some(Reasoning { text: Some(thoughts), tokens: None });
    }
    step
}

/// The conversation a request carries: `systemInstruction`, then `contents`. A user turn's
/// `functionResponse` parts answer the calls before it, as a tool step ahead of its text.
#[must_use]
pub fn history(req: &Value) -> History {
    let mut h = History::default();
    if let Some(sys) = setting(req, "systemInstruction", "system_instruction") {
        let text = match sys {
            Value::String(s) => s.clone(),
            other => user_text(parts(other)),
        };
        if !text.is_empty() {
            h.steps.push(Step::new(Role::System, text));
        }
    }
    // The SDK takes a bare string or one content for a single user turn.
    match req.get("contents") {
        Some(Value::String(text)) => {
            h.msg_step.push(h.steps.len());
            h.steps.push(Step::new(Role::User, text.clone()));
            h
        }
        Some(one @ Value::Object(_)) => turns(h, std::slice::from_ref(one)),
        Some(Value::Array(all)) => turns(h, all),
        _ => h,
    }
}

fn turns(mut h: History, contents: &[Value]) -> History {
    for c in contents {
        h.msg_step.push(h.steps.len());
        if c.get("role").and_then(Value::as_str) == Some("model") {
            h.steps.push(model_step(c));
            continue;
        }
        let ps = parts(c);
        let results: Vec<ToolResult> =
            ps.iter().filter_map(|p| field(p, "functionResponse", "function_response")).map(function_result).collect();
        let text = user_text(ps);
        if !results.is_empty() {
            let mut step = Step::new(Role::Tool, "");
            step.tool_results = results;
            h.steps.push(step);
        }
        if !text.is_empty() || ps.is_empty() {
            h.steps.push(Step::new(Role::User, text));
        }
    }
    h
}

fn user_text(ps: &[Value]) -> String {
    let mut text = String::new();
    for p in ps {
        if let Some(t) = p.get("text").and_then(Value::as_str) {
            push_text(&mut text, t);
        } else if let Some(m) = media(p) {
            push_text(&mut text, &m);
        }
    }
    text
}

/// Token counts of a `usageMetadata`. Gemini counts thinking apart from the answer
/// (`thoughtsTokenCount` beside `candidatesTokenCount`) and the results of its own tools
/// apart from the prompt (`toolUsePromptTokenCount`); OpenAI and Anthropic count them in, so
/// they are added here for token totals to compare across providers (prompt + completion =
/// `totalTokenCount`). `cachedContentTokenCount` is part of the prompt, as OpenAI's is.
#[must_use]
fn tokens(u: &Value) -> Option<Tokens> {
    if !u.is_object() {
        return None;
    }
    let prompt = uint(field(u, "promptTokenCount", "prompt_token_count"));
    let tool_use = uint(field(u, "toolUsePromptTokenCount", "tool_use_prompt_token_count"));
    let answer = uint(field(u, "candidatesTokenCount", "candidates_token_count"));
    let thoughts = uint(field(u, "thoughtsTokenCount", "thoughts_token_count"));
    let sum = |a: Option<u64>, b: Option<u64>| if a.is_none() && b.is_none() { None } else { Some(a.unwrap_or(0) + b.unwrap_or(0)) };
    Some(Tokens {
        prompt: sum(prompt, tool_use),
        completion: sum(answer, thoughts),
        reasoning: thoughts.filter(|n| *n > 0),
        cached: uint(field(u, "cachedContentTokenCount", "cached_content_token_count")).filter(|n| *n > 0),
    })
}

/// A `generateContent` response body (the first candidate; more than one is not a trajectory).
#[must_use]
pub fn reply(body: &Value) -> Reply {
    let cand = body.get("candidates").and_then(|c| c.get(0));
    let tokens = field(body, "usageMetadata", "usage_metadata").and_then(tokens);
    let finish = cand.and_then(|c| field(c, "finishReason", "finish_reason")).and_then(Value::as_str).map(ToString::to_string);
    let message = cand.and_then(|c| field(c, "finishMessage", "finish_message")).and_then(Value::as_str).filter(|m| !m.is_empty());
    let mut step = cand.map(|c| model_step(c.get("content").unwrap_or(&Value::Null)));
    if let Some(s) = step.as_mut() {
        s.tokens.clone_from(&tokens);
        if let Some(n) = tokens.as_ref().and_then(|t| t.reasoning) {
            s.reasoning.get_or_insert_with(Reasoning::default).tokens = Some(n);
        }
        // The API's own word that the reply's call did not parse (the call itself is dropped).
        if finish.as_deref() == Some("MALFORMED_FUNCTION_CALL") {
            s.format_error = Some(message.unwrap_or("MALFORMED_FUNCTION_CALL").chars().take(300).collect());
        }
    }
    let feedback = field(body, "promptFeedback", "prompt_feedback");
    let blocked = feedback.and_then(|f| field(f, "blockReason", "block_reason")).and_then(Value::as_str).map(ToString::to_string);
    let ratings = cand
        .and_then(|c| field(c, "safetyRatings", "safety_ratings"))
        .or_else(|| feedback.and_then(|f| field(f, "safetyRatings", "safety_ratings")));
    let flagged: Vec<String> = ratings
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter(|r| r.get("blocked").and_then(Value::as_bool) == Some(true))
        .filter_map(|r| {
            let cat = r.get("category").and_then(Value::as_str)?;
            let p = r.get("probability").and_then(Value::as_str);
            Some(p.map_or_else(|| cat.to_string(), |p| format!("{cat} ({p})")))
        })
        .collect();
    let mut said: Vec<String> = message.map(ToString::to_string).into_iter().collect();
    if !flagged.is_empty() {
        said.push(format!("blocked for {}", flagged.join(", ")));
    }
    let created = field(body, "createTime", "create_time")
        .and_then(Value::as_str)
        .and_then(|s| s.parse::<jiff::Timestamp>().ok())
        .map(jiff::Timestamp::as_second);
    Reply {
        step,
        finish,
        tokens,
        model: field(body, "modelVersion", "model_version").and_then(Value::as_str).map(ToString::to_string),
        refusal: None,
        created,
        blocked,
        finish_message: (!said.is_empty()).then(|| said.join("; ")),
    }
}

/// Declared tools of a request: each `functionDeclarations` entry, and the built-in tools
/// (`codeExecution`, `googleSearch`, ...) under their snake_case names.
#[must_use]
pub fn declared_tools(tools: &Value) -> Option<Vec<DeclaredTool>> {
    let mut out = Vec::new();
    for t in tools.as_array()? {
        let Some(o) = t.as_object() else { continue };
        for (k, v) in o {
            if matches!(k.as_str(), "functionDeclarations" | "function_declarations") {
                // Each declaration is a function as the other chat APIs declare them.
                out.extend(super::api::declared_tools(v).unwrap_or_default());
            } else {
                out.push(DeclaredTool { name: snake(k), description: None });
            }
        }
    }
    Some(out)
}

fn snake(k: &str) -> String {
    let mut s = String::with_capacity(k.len() + 4);
    for c in k.chars() {
        if c.is_ascii_uppercase() {
            s.push('_');
            s.push(c.to_ascii_lowercase());
        } else {
            s.push(c);
        }
    }
    s
}

/// The model a request names in its URL (`.../models/M:generateContent`, Vertex AI's
/// `.../publishers/google/models/M:streamGenerateContent`): the body has none.
#[must_use]
pub fn model_in_uri(uri: &str) -> Option<String> {
    let path = uri.split(['?', '#']).next()?;
    let (_, tail) = path.rsplit_once("/models/")?;
    let model = tail.split(':').next()?;
    (!model.is_empty() && !model.contains('/')).then(|| model.to_string())
}

/// Whether a value is a `generateContent` response (or one chunk of a stream).
#[must_use]
pub fn is_response(v: &Value) -> bool {
    v.get("candidates").is_some()
        || field(v, "usageMetadata", "usage_metadata").is_some()
        || field(v, "promptFeedback", "prompt_feedback").is_some()
}

/// Puts a `streamGenerateContent` stream (SSE `data:` chunks, or the JSON array sent without
/// `alt=sse`) back into the one response a `generateContent` call would have returned: each
/// chunk adds parts to the first candidate (text pieces join the part before them when both
/// are thoughts or both are not), the last finish reason, usage and ratings win (usage is
/// cumulative), and the first model version and response id stand.
#[must_use]
pub fn merge_chunks(chunks: &[Value]) -> Option<Value> {
    if chunks.is_empty() {
        return None;
    }
    let mut out = Map::new();
    let mut merged: Vec<Value> = Vec::new();
    let mut cand = Map::new();
    let mut role: Option<Value> = None;
    for c in chunks {
        let Some(o) = c.as_object() else { continue };
        for (k, v) in o {
            match k.as_str() {
                "candidates" => {}
                "modelVersion" | "model_version" | "responseId" | "response_id" | "createTime" | "create_time" => {
                    out.entry(k.clone()).or_insert_with(|| v.clone());
                }
                _ => {
                    out.insert(k.clone(), v.clone());
                }
            }
        }
        let Some(first) = o.get("candidates").and_then(|c| c.get(0)).and_then(Value::as_object) else { continue };
        for (k, v) in first {
            if k == "content" {
                if let Some(r) = v.get("role") {
                    role.get_or_insert_with(|| r.clone());
                }
                for p in parts(v) {
                    append_part(&mut merged, p);
                }
            } else if !v.is_null() {
                cand.insert(k.clone(), v.clone());
            }
        }
    }
    if !merged.is_empty() || role.is_some() || !cand.is_empty() {
        let mut content = Map::new();
        content.insert("parts".into(), Value::Array(merged));
        content.insert("role".into(), role.unwrap_or_else(|| Value::String("model".into())));
        cand.insert("content".into(), Value::Object(content));
        out.insert("candidates".into(), Value::Array(vec![Value::Object(cand)]));
    }
    Some(Value::Object(out))
}

fn append_part(merged: &mut Vec<Value>, p: &Value) {
    let is_thought = |x: &Value| x.get("thought").and_then(Value::as_bool).unwrap_or(false);
    if let (Some(add), Some(last)) = (p.get("text").and_then(Value::as_str), merged.last_mut())
        && is_thought(last) == is_thought(p)
        && let Some(cur) = last.get("text").and_then(Value::as_str)
    {
        let joined = format!("{cur}{add}");
        if let Some(o) = last.as_object_mut() {
            o.insert("text".into(), Value::String(joined));
            // The signature that closes a streamed thought comes with its last piece.
            for key in ["thoughtSignature", "thought_signature"] {
                if let Some(sig) = p.get(key) {
                    o.insert(key.into(), sig.clone());
                }
            }
        }
        return;
    }
    merged.push(p.clone());
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn function_responses_answer_calls_by_name_and_text_follows() {
        let req = json!({
            "system_instruction": {"parts": [{"text": "be brief"}]},
            "contents": [
                {"role": "user", "parts": [{"text": "weather?"}, {"inline_data": {"mime_type": "image/png", "data": "AA=="}}]},
                {"role": "model", "parts": [{"text": "plan", "thought": true}, {"functionCall": {"name": "w", "args": {"c": "Oslo"}}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "w", "response": {"error": "down"}}}, {"text": "and?"}]}
            ]
        });
        let h = history(&req);
        let roles: Vec<Role> = h.steps.iter().map(|s| s.role).collect();
        assert_eq!(roles, [Role::System, Role::User, Role::Assistant, Role::Tool, Role::User]);
        assert_eq!(h.msg_step, [1, 2, 3]);
        assert_eq!(h.steps[1].text, "weather?\n[inline image/png]");
        assert_eq!(h.steps[2].reasoning.as_ref().unwrap().text.as_deref(), Some("plan"));
        assert_eq!(h.steps[2].tool_calls[0].arguments["c"], "Oslo");
        let r = &h.steps[3].tool_results[0];
        assert_eq!((r.output.as_str(), r.is_error, r.name.as_deref()), ("down", true, Some("w")));
    }

    #[test]
    fn thoughts_and_tool_use_count_in_the_totals() {
        let t = tokens(&json!({"promptTokenCount": 10, "toolUsePromptTokenCount": 5, "candidatesTokenCount": 7, "thoughtsTokenCount": 3, "cachedContentTokenCount": 4, "totalTokenCount": 25})).unwrap();
        assert_eq!((t.prompt, t.completion, t.reasoning, t.cached), (Some(15), Some(10), Some(3), Some(4)));
    }

    #[test]
    fn streamed_chunks_join_text_and_keep_the_last_finish() {
        let chunks = [
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "th", "thought": true}]}}], "modelVersion": "m1"}),
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "ink", "thought": true}, {"text": "Hel"}]}}]}),
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "lo"}, {"functionCall": {"name": "f", "args": {}}}]}, "finishReason": "STOP"}], "usageMetadata": {"candidatesTokenCount": 2}}),
        ];
        let r = reply(&merge_chunks(&chunks).unwrap());
        let s = r.step.unwrap();
        assert_eq!((s.text.as_str(), s.reasoning.unwrap().text.as_deref()), ("Hello", Some("think")));
        assert_eq!(s.tool_calls.len(), 1);
        assert_eq!((r.finish.as_deref(), r.model.as_deref()), (Some("STOP"), Some("m1")));
    }

    #[test]
    fn the_model_is_in_the_url() {
        let v = "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse";
        assert_eq!(model_in_uri(v).as_deref(), Some("gemini-2.5-pro"));
        assert_eq!(model_in_uri("https://x/v1beta/models/gemini-2.0-flash:generateContent").as_deref(), Some("gemini-2.0-flash"));
        assert_eq!(model_in_uri("https://api.openai.com/v1/chat/completions"), None);
    }
}
