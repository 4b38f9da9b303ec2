//! Gemini CLI: the chat sessions it records (`~/.gemini/tmp/<project>/chats/session-*.json`,
//! and the `.jsonl` form newer versions append to) and the output of headless runs
//! (`gemini -p ... --output-format json` or `stream-json`, or plain text).
//!
//! The adapters decode only: steps, calls and results (with the error type the stream gives),
//! and the signals of how the run ended — an error message that closes a session, the headless
//! error's type, code and message, the stream's result status, the CLI's last line in text
//! output. What those mean (the scheduler's `Tool "X" not found` rejection, the turn limit, the
//! provider's errors) is said by `rules/harnesses/gemini-cli.toml`.

mod headless;
mod session;
mod stream;

use std::path::Path;

use serde_json::Value;

pub use headless::GeminiHeadless;
pub use session::GeminiSession;
pub use stream::GeminiStream;

const HARNESS: &str = "gemini-cli";

/// Text of a `PartListUnion`: a string, one part, or a list of them. Function calls and
/// responses inside content are named, not expanded (they are read from `toolCalls`).
fn parts_text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().map(parts_text).filter(|s| !s.is_empty()).collect::<Vec<_>>().join("\n"),
        Value::Object(o) => {
            if let Some(t) = o.get("text").and_then(Value::as_str) {
                t.to_string()
            } else if let Some(r) = o.get("functionResponse") {
                response_text(r.get("response").unwrap_or(&Value::Null))
            } else {
                o.keys().next().map(|k| format!("[{k}]")).unwrap_or_default()
            }
        }
        other => other.to_string(),
    }
}

/// `functionResponse.response` is `{output}` or `{error}` (or any object the tool returned).
fn response_text(r: &Value) -> String {
    if let Some(s) = r.get("output").and_then(Value::as_str) {
        return s.to_string();
    }
    if let Some(s) = r.get("error").and_then(Value::as_str) {
        return s.to_string();
    }
    match r {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `run_shell_command` reports `Exit Code: N` inside its output (the call itself succeeds).
fn shell_exit_code(output: &str) -> Option<i64> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| regex::Regex::new(r"(?m)^Exit Code: (-?\d+)\s*$").expect("static regex"));
    re.captures(output)?.get(1)?.as_str().parse().ok()
}

fn file_stem(p: &Path) -> String {
    let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    name.split('.').next().unwrap_or(&name).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn part_lists_read_as_text() {
        let v: Value = serde_json::json!([{"text": "a"}, {"functionResponse": {"response": {"error": "boom"}}}]);
        assert_eq!(parts_text(&v), "a\nboom");
        assert_eq!(parts_text(&serde_json::json!({"text": "x"})), "x");
    }

    #[test]
    fn shell_output_names_its_exit_code() {
        assert_eq!(shell_exit_code("Command: false\nExit Code: 1\nSignal: 0"), Some(1));
        assert_eq!(shell_exit_code("no code here"), None);
    }
}
