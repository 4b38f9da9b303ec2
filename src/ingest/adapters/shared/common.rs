//! Small pieces every adapter needs: text from content parts, arguments that may be JSON
//! inside a string, timestamps, and a blank record to fill.

use serde_json::Value;

use crate::model::ToolCall;

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

/// Tool names that end a run by the agent's own choice, across the harnesses coroner reads.
/// Used only to tell "finished" from "stopped"; the classifier's harness profiles refine it.
pub const FINISH_TOOLS: &[&str] =
    &["finish", "submit", "mark_task_complete", "task_complete", "attempt_completion", "complete_task", "exit", "done", "final_answer"];

#[must_use]
pub fn is_finish_tool(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    FINISH_TOOLS.contains(&n.as_str())
}

/// A number from a JSON value that may be an integer, a float or a numeric string.
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

#[must_use]
pub fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// The first number in `text` after `after` ("timed out after 600.0 seconds" → 600).
#[must_use]
pub fn number_after(text: &str, after: &str) -> Option<f64> {
    let i = text.find(after)? + after.len();
    let rest = text[i..].trim_start();
    let end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
    rest[..end].trim_end_matches('.').parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn numbers_after_words() {
        assert_eq!(number_after("Agent execution timed out after 600.0 seconds", "after"), Some(600.0));
    }
}
