//! Small pieces every adapter needs: text from content parts, arguments that may be JSON
//! inside a string, numbers that may be written as strings.

use serde_json::Value;

use crate::model::{DeclaredTool, ToolCall};

/// Text of a message `content` that may be a string, a list of parts (`{type: text, text}`,
/// `{type: image, ...}`), or absent. Non-text parts are named, not dropped silently.
#[must_use]
pub fn content_text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Array(parts) => {
            let mut out = String::new();
            for p in parts {
                let piece = match p {
                    Value::String(s) => s.clone(),
                    Value::Object(o) => {
                        if let Some(t) = o.get("text").and_then(Value::as_str) {
                            t.to_string()
                        } else if let Some(c) = o.get("content") {
                            content_text(c)
                        } else {
                            let kind = o.get("type").and_then(Value::as_str).unwrap_or("part");
                            format!("[{kind}]")
                        }
                    }
                    other => other.to_string(),
                };
                if !out.is_empty() && !piece.is_empty() {
                    out.push('\n');
                }
                out.push_str(&piece);
            }
            out
        }
        other => other.to_string(),
    }
}

/// A tool call whose arguments may be an object, or JSON inside a string (OpenAI, Codex).
#[must_use]
pub fn tool_call(id: Option<String>, name: impl Into<String>, args: &Value) -> ToolCall {
    let (arguments, raw_arguments) = match args {
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(v) => (v, None),
            Err(_) if s.trim().is_empty() => (Value::Object(serde_json::Map::new()), None),
            Err(_) => (Value::Null, Some(s.clone())),
        },
        other => (other.clone(), None),
    };
    ToolCall { id, name: name.into(), arguments, raw_arguments }
}

/// The text of a reply an agent wrapped as a JSON object of one string member
/// (`{"message": "..."}`, as some tau2-bench leaderboard agents answer): the member is what the
/// user was shown, and phrase rules read words, not JSON escapes. Anything else is kept as it is.
#[must_use]
pub fn unwrapped_reply(text: String) -> String {
    let t = text.trim();
    if !(t.starts_with('{') && t.ends_with('}')) {
        return text;
    }
    match serde_json::from_str::<serde_json::Map<String, Value>>(t) {
        Ok(m) if m.len() == 1 => match m.into_iter().next() {
            Some((k, Value::String(v))) if matches!(k.as_str(), "message" | "content" | "response" | "text" | "reply") => v,
            _ => text,
        },
        _ => text,
    }
}

/// A task id as the tau-bench family writes it: a string, or a number in older files.
#[must_use]
pub fn task_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "unknown".into(),
        other => other.to_string(),
    }
}

/// A test's status word from whether it passed.
#[must_use]
pub fn test_status(ok: bool) -> String {
    if ok { "passed".into() } else { "failed".into() }
}

#[must_use]
pub fn num(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

#[must_use]
pub fn uint(v: Option<&Value>) -> Option<u64> {
    match v? {
        Value::Number(n) => n.as_u64().or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A tool the run offered, from an OpenAI-style declaration (`{type: function, function: {name,
/// description}}`) or a bare `{name, description}`; the description's first line.
#[must_use]
pub fn declared_tool(v: &Value) -> Option<DeclaredTool> {
    let f = v.get("function").unwrap_or(v);
    let name = f.get("name")?.as_str()?.to_string();
    let description = f.get("description").and_then(Value::as_str).map(|d| d.lines().next().unwrap_or("").to_string());
    Some(DeclaredTool { name, description })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_wrapped_in_one_json_member_is_its_text() {
        assert_eq!(unwrapped_reply(r#"{"message":"Done.\nAnything else?"}"#.into()), "Done.\nAnything else?");
        for kept in [r#"{"message": 1}"#, r#"{"message": "a", "id": 2}"#, r#"{"answer": "a"}"#, "{not json}", "plain"] {
            assert_eq!(unwrapped_reply(kept.into()), kept);
        }
    }

    #[test]
    fn content_parts_and_strings() {
        let v: Value = serde_json::json!([{"type": "text", "text": "a"}, {"type": "image", "source": {}}]);
        assert_eq!(content_text(&v), "a\n[image]");
        assert_eq!(content_text(&Value::String("x".into())), "x");
    }

    #[test]
    fn arguments_inside_strings() {
        let c = tool_call(None, "shell", &Value::String(r#"{"command": ["ls"]}"#.into()));
        assert_eq!(c.arguments["command"][0], "ls");
        let bad = tool_call(None, "shell", &Value::String("{oops".into()));
        assert_eq!(bad.raw_arguments.as_deref(), Some("{oops"));
        assert!(bad.arguments.is_null());
    }
}
